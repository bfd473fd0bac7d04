import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit'
import {
  GraphQLScalarType,
  GraphQLSchema,
  Kind,
  BREAK,
  execute,
  getOperationAST,
  visit,
  getVariableValues,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type OperationDefinitionNode
} from 'graphql'

/**
 * The variables' type in the documents graphql-jit compiles: graphql-js has coerced the values already, so
 * they pass through as they are. (graphql-jit generates its coercion code inline, which never ends for a
 * recursive input type such as a filter's `and`/`or`.) It exists only in the compiling copy of the schema.
 */
const COERCED = new GraphQLScalarType({ name: 'FeathersQueryCoercedVariable' })

/** The operation with every variable of type COERCED and without defaults, which coercion has applied. */
function withCoercedVariables(document: DocumentNode, operation: OperationDefinitionNode): DocumentNode {
  const variableDefinitions = (operation.variableDefinitions ?? []).map((definition) => ({
    ...definition,
    type: { kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: COERCED.name } } as const,
    defaultValue: undefined
  }))
  return {
    ...document,
    definitions: document.definitions.map((definition) =>
      definition === operation ? { ...operation, variableDefinitions } : definition
    )
  }
}

/** Whether the document reads the schema (`__schema`, `__type`), which must describe the served schema. */
function introspects(document: DocumentNode) {
  let found = false
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        found = true
        return BREAK
      }
    }
  })
  return found
}

/**
 * Executes operations through graphql-jit: each validated document is compiled once into a function that
 * resolves exactly its selection, several times faster than graphql-js interpreting the document for every
 * record of every page. Variables are coerced by graphql-js (its rules and messages), and resolvers, scalars
 * and errors are the schema's own, so only the speed differs. The document cache hands back the same
 * DocumentNode for the same text; compiled functions are kept per document and operation, and dropped with it.
 */
export function compiledExecution(schema: GraphQLSchema) {
  const compiling = new GraphQLSchema({ ...schema.toConfig(), types: [...Object.values(schema.getTypeMap()), COERCED] })
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | ExecutionResult | 'interpreted'>>()

  function compiledFor(document: DocumentNode, operation: OperationDefinitionNode) {
    let byOperation = compiled.get(document)
    if (!byOperation) {
      byOperation = new Map()
      compiled.set(document, byOperation)
    }
    const name = operation.name?.value ?? ''
    let query = byOperation.get(name)
    if (!query) {
      // Introspection is left to graphql-js: compiled, it would describe the compiling copy of the schema.
      query = introspects(document)
        ? 'interpreted'
        : compileQuery(compiling, withCoercedVariables(document, operation), operation.name?.value)
      byOperation.set(name, query)
    }
    return query
  }

  return function executeCompiled(args: ExecutionArgs) {
    const operation = getOperationAST(args.document, args.operationName)
    // No such operation, or several without a name: graphql-js says which.
    if (!operation) return execute(args)
    const variables = getVariableValues(schema, operation.variableDefinitions ?? [], args.variableValues ?? {})
    if (variables.errors) return { errors: variables.errors }
    const query = compiledFor(args.document, operation)
    if (query === 'interpreted' || !isCompiledQuery(query)) return execute(args)
    return query.query(args.rootValue, args.contextValue, variables.coerced)
  }
}
