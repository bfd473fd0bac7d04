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

/**
 * Whether graphql-jit 0.8 would answer the document differently from graphql-js, so that it must be
 * interpreted instead:
 * - it reads the schema (`__schema`, `__type`): compiled, it would describe the compiling copy;
 * - a string literal holds one of graphql-jit's `__MAGIC_…` markers, which it turns back into code (a
 *   literal `"__MAGIC_DATE__…<text>"` would run `<text>` on the server);
 * - a response key holds `_`: graphql-jit names each field's resolve info by its path joined with `_`, so
 *   `a { b_c }` and `c_a { b }` would share one (`__typename`, always a leaf, cannot collide);
 * - `@skip` or `@include`: graphql-jit marks the shared AST nodes, so a condition on one fragment spread
 *   leaks to the others.
 */
function mustInterpret(document: DocumentNode) {
  let found = false
  const stop = () => {
    found = true
    return BREAK
  }
  visit(document, {
    Field(node) {
      const key = node.alias?.value ?? node.name.value
      if (node.name.value === '__schema' || node.name.value === '__type') return stop()
      if (key !== '__typename' && key.includes('_')) return stop()
    },
    StringValue(node) {
      if (node.value.includes('__MAGIC_')) return stop()
    },
    Directive(node) {
      if (node.name.value === 'skip' || node.name.value === 'include') return stop()
    }
  })
  return found
}

/** graphql-js' own cap on the errors of coercing one request's variables. */
const MAX_VARIABLE_ERRORS = 50

/**
 * Executes operations through graphql-jit: each validated document is compiled once into a function that
 * resolves exactly its selection, several times faster than graphql-js interpreting the document for every
 * record of every page. Variables are coerced by graphql-js (its rules and messages), and resolvers, scalars
 * and errors are the schema's own. Where graphql-jit would answer differently (see `mustInterpret`, and a
 * declared variable the request leaves out, which graphql-jit passes on as an explicit null), graphql-js
 * executes. The document cache hands back the same DocumentNode for the same text; compiled functions are
 * kept per document and operation, and dropped with it.
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
      query = mustInterpret(document)
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
    const definitions = operation.variableDefinitions ?? []
    const variables = getVariableValues(schema, definitions, args.variableValues ?? {}, {
      maxErrors: MAX_VARIABLE_ERRORS
    })
    if (variables.errors) return { errors: variables.errors }
    const query = compiledFor(args.document, operation)
    const omitted = definitions.some((definition) => !(definition.variable.name.value in variables.coerced))
    if (query === 'interpreted' || omitted || !isCompiledQuery(query)) return execute(args)
    return query.query(args.rootValue, args.contextValue, variables.coerced)
  }
}
