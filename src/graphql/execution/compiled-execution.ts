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
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ExecutionResult,
  type OperationDefinitionNode
} from 'graphql'
import { variablesNestingError } from './limits'

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

/** More fields than this, with fragments written out, and graphql-jit's generated code grows past reason. */
const MAX_COMPILED_FIELDS = 1000

/**
 * Whether graphql-jit 0.8 would answer the document differently from graphql-js (or at a cost graphql-js
 * does not have), so that it must be interpreted instead:
 * - it reads the schema (`__schema`, `__type`): compiled, it would describe the compiling copy;
 * - a string literal holds one of graphql-jit's `__MAGIC_…` markers, which it turns back into code (a
 *   literal `"__MAGIC_DATE__…<text>"` would run `<text>` on the server);
 * - a response key holds `_`: graphql-jit names each field's resolve info by its path joined with `_`, so
 *   `a { b_c }` and `c_a { b }` would share one (`__typename` cannot collide: no other key holds `_`);
 * - `@skip` or `@include`: graphql-jit marks the shared AST nodes, so a condition on one fragment spread
 *   leaks to the others;
 * - a variable named like a property every object has (`toString`, `__proto__`): graphql-jit reads and
 *   writes variables on plain objects;
 * - more than MAX_COMPILED_FIELDS fields once fragments are written out: graphql-jit writes out every spread,
 *   so a few kilobytes of nested fragments compile for seconds into hundreds of megabytes of code.
 */
function mustInterpret(document: DocumentNode, operation: OperationDefinitionNode) {
  // Mutations cost their writes, not their execution: graphql-js runs them, one root field after the other.
  if (operation.operation !== 'query') return true
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
    },
    VariableDefinition(node) {
      if (node.variable.name.value in Object.prototype) return stop()
    }
  })
  return found || expandedFieldCount(document, operation) > MAX_COMPILED_FIELDS
}

/** The number of fields of the operation with every fragment spread written out, each fragment counted once. */
function expandedFieldCount(document: DocumentNode, operation: OperationDefinitionNode) {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  }
  const counted = new Map<string, number>()
  const count = (selectionSet: SelectionSetNode | undefined, visiting: Set<string>): number => {
    let total = 0
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) total += 1 + count(selection.selectionSet, visiting)
      else if (selection.kind === Kind.INLINE_FRAGMENT) total += count(selection.selectionSet, visiting)
      else {
        const name = selection.name.value
        if (!counted.has(name) && !visiting.has(name)) {
          visiting.add(name)
          counted.set(name, count(fragments.get(name)?.selectionSet, visiting))
          visiting.delete(name)
        }
        total += counted.get(name) ?? 0
      }
      // Stop early: past the limit the exact number does not matter (and could grow past any float).
      if (total > MAX_COMPILED_FIELDS) return total
    }
    return total
  }
  return count(operation.selectionSet, new Set())
}

/**
 * The variables used inside list and object literals (`sorting: [$sort]`, `filter: {or: [$a, $b]}`). graphql-js
 * refuses an explicit null for one where the position is non-null; graphql-jit hands it to the resolver.
 */
function variablesInLiterals(document: DocumentNode) {
  const names = new Set<string>()
  visit(document, {
    ListValue(node) {
      for (const value of node.values) if (value.kind === Kind.VARIABLE) names.add(value.name.value)
    },
    ObjectField(node) {
      if (node.value.kind === Kind.VARIABLE) names.add(node.value.name.value)
    }
  })
  return [...names]
}

/** graphql-js' own cap on the errors of coercing one request's variables. */
const MAX_VARIABLE_ERRORS = 50

interface Compiled {
  query: CompiledQuery | ExecutionResult | 'interpreted'
  variablesInLiterals: string[]
}

/**
 * Executes operations through graphql-jit: each validated document is compiled once into a function that
 * resolves exactly its selection, several times faster than graphql-js interpreting the document for every
 * record of every page. Variables are coerced by graphql-js (its rules and messages), and resolvers, scalars
 * and errors are the schema's own. Where graphql-jit would answer differently (see `mustInterpret`; and per
 * request, a declared variable left out, which graphql-jit passes on as an explicit null, or a null inside a
 * literal), graphql-js executes. The document cache hands back the same DocumentNode for the same text;
 * compiled functions are kept per document and operation, and dropped with it.
 */
export function compiledExecution(schema: GraphQLSchema) {
  const compiling = new GraphQLSchema({
    ...schema.toConfig(),
    types: [...Object.values(schema.getTypeMap()), COERCED]
  })
  const compiled = new WeakMap<DocumentNode, Map<string, Compiled>>()

  function compiledFor(document: DocumentNode, operation: OperationDefinitionNode) {
    let byOperation = compiled.get(document)
    if (!byOperation) {
      byOperation = new Map()
      compiled.set(document, byOperation)
    }
    const name = operation.name?.value ?? ''
    let entry = byOperation.get(name)
    if (!entry) {
      entry = mustInterpret(document, operation)
        ? { query: 'interpreted', variablesInLiterals: [] }
        : {
            query: compileQuery(compiling, withCoercedVariables(document, operation), operation.name?.value),
            variablesInLiterals: variablesInLiterals(document)
          }
      byOperation.set(name, entry)
    }
    return entry
  }

  return function executeCompiled(args: ExecutionArgs) {
    const operation = getOperationAST(args.document, args.operationName)
    // No such operation, or several without a name: graphql-js says which.
    if (!operation) return execute(args)
    const definitions = operation.variableDefinitions ?? []
    // graphql-js coerces them recursively.
    const tooDeep = variablesNestingError(args.variableValues)
    if (tooDeep) return { errors: [tooDeep] }
    // An operation that declares no variable has none to coerce (graphql-js ignores the others sent).
    const variables =
      definitions.length === 0
        ? { coerced: {} }
        : getVariableValues(schema, definitions, args.variableValues ?? {}, {
            maxErrors: MAX_VARIABLE_ERRORS
          })
    if (variables.errors) return { errors: variables.errors }
    const { query, variablesInLiterals: nested } = compiledFor(args.document, operation)
    const coerced = variables.coerced
    const omitted = definitions.some((definition) => !Object.hasOwn(coerced, definition.variable.name.value))
    const nullInLiteral = nested.some((name) => coerced[name] === null)
    if (query === 'interpreted' || omitted || nullInLiteral || !isCompiledQuery(query)) return execute(args)
    return query.query(args.rootValue, args.contextValue, coerced)
  }
}
