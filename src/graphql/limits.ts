import {
  GraphQLError,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule
} from 'graphql'

export interface GraphqlLimits {
  /** Deepest nesting of fields one operation may select (default 12). */
  maxDepth?: number
  /**
   * Largest estimated cost of one operation (default 25,000): every field costs 1, and what a connection
   * field (one with a `paging` argument) selects counts once per record of its page.
   */
  maxComplexity?: number
  /** Most tokens a document may have before it is even parsed (default 10,000). */
  maxTokens?: number
}

export const DEFAULT_LIMITS: Required<GraphqlLimits> = { maxDepth: 12, maxComplexity: 25_000, maxTokens: 10_000 }

/** The page a connection field asks for; a page size given as a variable is assumed to be the largest. */
function pageSize(field: FieldNode, defaultSize: number, largest: number) {
  const paging = field.arguments?.find((argument) => argument.name.value === 'paging')
  if (!paging) return defaultSize
  if (paging.value.kind !== Kind.OBJECT) return largest
  for (const name of ['first', 'last']) {
    const size = paging.value.fields.find((entry) => entry.name.value === name)?.value
    if (size?.kind === Kind.INT) return Number(size.value)
    if (size) return largest
  }
  return defaultSize
}

interface Measure {
  depth: number
  cost: number
}

/**
 * Depth and cost of a selection set, following fragments. A fragment's measure is the same wherever it is
 * spread, so it is worked out once (`measured`): a chain of fragments that each spread the previous one twice
 * would otherwise take exponential time. `visiting` guards against cycles, which validation reports anyway.
 */
function measure(
  context: ValidationContext,
  selections: SelectionSetNode,
  sizes: { defaultSize: number; largest: number },
  visiting: Set<string>,
  measured: Map<string, Measure>
): Measure {
  let depth = 0
  let cost = 0
  for (const selection of selections.selections) {
    let inner: Measure = { depth: 0, cost: 0 }
    if (selection.kind === Kind.FIELD && selection.name.value.startsWith('__')) {
      // Introspection (`__schema`, `__type`) reads the schema, not the database; tools nest it 15 deep.
      continue
    } else if (selection.kind === Kind.FIELD) {
      const children = selection.selectionSet
        ? measure(context, selection.selectionSet, sizes, visiting, measured)
        : inner
      const connection = selection.arguments?.some((argument) => argument.name.value === 'paging') ?? false
      // An empty or negative page still selects its subtree once: `first: 0` must not make anything free.
      const times = connection ? Math.max(pageSize(selection, sizes.defaultSize, sizes.largest), 1) : 1
      inner = { depth: children.depth + 1, cost: 1 + times * children.cost }
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      inner = measure(context, selection.selectionSet, sizes, visiting, measured)
    } else {
      const name = selection.name.value
      const known = measured.get(name)
      const fragment: FragmentDefinitionNode | null | undefined = context.getFragment(name)
      if (known) inner = known
      else if (fragment && !visiting.has(name)) {
        visiting.add(name)
        inner = measure(context, fragment.selectionSet, sizes, visiting, measured)
        visiting.delete(name)
        measured.set(name, inner)
      }
    }
    depth = Math.max(depth, inner.depth)
    cost += inner.cost
  }
  return { depth, cost }
}

/**
 * Refuses operations that would cost the server too much before anything runs: too deep, or too many
 * records and fields in all (connections multiply what they select by their page size).
 */
export function operationLimits(
  limits: Required<GraphqlLimits>,
  sizes: { defaultSize: number; largest: number }
): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const { depth, cost } = measure(context, operation.selectionSet, sizes, new Set(), new Map())
      if (depth > limits.maxDepth) {
        context.reportError(
          new GraphQLError(`The query is ${depth} levels deep; at most ${limits.maxDepth} are allowed.`, {
            nodes: operation,
            extensions: { code: 'QUERY_TOO_DEEP', depth, maxDepth: limits.maxDepth }
          })
        )
      }
      if (cost > limits.maxComplexity) {
        context.reportError(
          new GraphQLError(
            `The query could cost ${cost} (fields times page sizes); at most ${limits.maxComplexity} is allowed. ` +
              'Ask for smaller pages or fewer nested connections.',
            { nodes: operation, extensions: { code: 'QUERY_TOO_COMPLEX', cost, maxComplexity: limits.maxComplexity } }
          )
        )
      }
    }
  })
}
