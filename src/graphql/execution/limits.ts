import {
  GraphQLError,
  Lexer,
  Source,
  TokenKind,
  type OperationDefinitionNode,
  type ValidationRule
} from 'graphql'
import { ConfigurationError } from '../../common/errors'
import type { PageSizes } from '../../resource/resolved'
import { OperationCost } from './operation-cost'
import { DEFAULTS } from '../../resource/defaults'

export interface GraphqlLimits {
  /** Deepest nesting of fields one operation may select (default 12). */
  maxDepth?: number
  /**
   * Largest estimated cost of one operation (default 25,000): every selection costs 1, what a connection
   * field (one with a `paging` argument) selects counts once per record of its page, and what an aggregate
   * selects once per group it may answer (the resource's `aggregate.maxGroups` when `groupBy` is selected).
   */
  maxComplexity?: number
  /**
   * Most SQL statements one operation may run (default 50): one per root query and per root `totalCount`,
   * one per batch of up to 500 parents for relations and relation aggregates.
   */
  maxStatements?: number
  /**
   * Most service calls of one request that run at once (default 2), and so the most pooled connections it
   * holds: the others wait their turn inside the request, not in the pool ahead of other requests.
   */
  maxConcurrentStatements?: number
  /** Most tokens a document may have before it is even parsed (default 10,000). */
  maxTokens?: number
  /** Largest document in bytes (UTF-8), refused before it is parsed (default 100,000). */
  maxDocumentBytes?: number
  /** Bytes of parsed documents kept for reuse, estimated from their text and tokens (default 20 MB). */
  documentCacheBytes?: number
  /** Most operations (subscriptions) one WebSocket connection runs at once (default 10). */
  maxSubscriptions?: number
  /**
   * Most events of one subscription waiting for the client to read them (default 100); one more closes the
   * connection (code 4429), so a client that stops reading cannot make the server hold an unbounded backlog.
   */
  maxQueuedEvents?: number
  /** Largest WebSocket message in bytes, as large as an HTTP body may be (default 1 MiB); larger closes (1009). */
  maxMessageBytes?: number
  /** Most GraphQL WebSocket connections the process holds at once (default 1,000); more are closed (4429). */
  maxConnections?: number
  /**
   * Most GraphQL WebSocket connections of one user (by the token's subject), or of one address for anonymous
   * callers, at once (default 10); more are closed (4429).
   */
  maxConnectionsPerUser?: number
}

export const DEFAULT_LIMITS: Required<GraphqlLimits> = DEFAULTS.graphqlLimits

/** The limits in force: the defaults and what is configured (anything but a positive integer stops start-up). */
export function resolveLimits(configured: GraphqlLimits = {}): Required<GraphqlLimits> {
  const limits = { ...DEFAULT_LIMITS }
  for (const [name, value] of Object.entries(configured) as Array<[keyof GraphqlLimits, unknown]>) {
    if (value === undefined) continue
    if (!(name in DEFAULT_LIMITS)) throw new ConfigurationError(`graphql.limits.${name} is not a limit`)
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ConfigurationError(`graphql.limits.${name} must be a positive integer`)
    }
    limits[name] = value
  }
  return limits
}

/**
 * Refuses a document over `maxBytes` before any work on it: its byte length is bounded by three bytes per
 * UTF-16 unit, so only sources near the limit are measured.
 */
export function checkDocumentSize(source: string, maxBytes: number) {
  if (source.length * 3 <= maxBytes) return
  const bytes = source.length > maxBytes ? source.length : Buffer.byteLength(source)
  if (bytes <= maxBytes) return
  throw new GraphQLError(`The query document is larger than ${maxBytes} bytes.`, {
    extensions: { code: 'QUERY_TOO_LARGE', maxBytes }
  })
}

/**
 * How deep brackets may nest in a document (`{`, `[`, `(`) and in the variables: far deeper than anything the
 * other limits let through, yet shallow enough that graphql-js, which parses documents and coerces variables
 * recursively, cannot run out of stack on them (a filter literal 2,400 levels deep fits in 10,000 tokens).
 */
export const MAX_NESTING = 256

/**
 * Refuses a document whose brackets nest deeper than MAX_NESTING, before graphql-js parses it. graphql-js'
 * own lexer reads the tokens (strings and comments as it parses them), without recursion.
 */
export function checkDocumentNesting(source: string, maxTokens: number) {
  const lexer = new Lexer(new Source(source))
  let depth = 0
  for (let tokens = 0; tokens <= maxTokens; tokens++) {
    const token = lexer.advance()
    if (token.kind === TokenKind.EOF) return
    if (OPENING.has(token.kind)) {
      if (++depth > MAX_NESTING) throw tooDeeplyNested('The query document nests', 'QUERY_TOO_DEEP')
    } else if (CLOSING.has(token.kind)) depth--
  }
  // More tokens than allowed: the parser refuses the document with its own message.
}

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L])
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R])

/** The error of variables whose objects and lists nest deeper than MAX_NESTING, checked without recursion. */
export function variablesNestingError(variables: unknown): GraphQLError | undefined {
  const pending: Array<[unknown, number]> = [[variables, 0]]
  while (pending.length) {
    const [value, depth] = pending.pop()!
    if (value === null || typeof value !== 'object') continue
    if (depth >= MAX_NESTING) return tooDeeplyNested('The variables nest', 'BAD_USER_INPUT')
    for (const member of Object.values(value)) pending.push([member, depth + 1])
  }
  return undefined
}

function tooDeeplyNested(what: string, code: string) {
  return new GraphQLError(`${what} more than ${MAX_NESTING} levels deep.`, {
    extensions: { code, maxNesting: MAX_NESTING }
  })
}

/**
 * The cost and SQL statements each validated operation was measured at. Validation runs once per cached
 * document, so its nodes keep the numbers for the operation's span and the caller's budget.
 */
const measuredOperations = new WeakMap<OperationDefinitionNode, { cost: number; statements: number }>()

/** What `operation` was measured at when it was validated. */
export function measuredOperation(operation: OperationDefinitionNode) {
  return measuredOperations.get(operation)
}

/**
 * Refuses operations that would cost the server too much before anything runs: too deep, too many records
 * and fields in all (connections multiply what they select by their page size, aggregates by their groups),
 * or too many SQL statements.
 */
export function operationLimits(limits: Required<GraphqlLimits>, sizes: PageSizes): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const measured = new OperationCost(context, sizes, limits)
      measured.walkOperation(operation)
      const { depth, cost, statements } = measured
      measuredOperations.set(operation, { cost, statements })
      if (depth > limits.maxDepth) {
        context.reportError(
          // The walk goes no further than one level too deep, so the depth itself is not known.
          new GraphQLError(
            `The query is more than ${limits.maxDepth} levels deep; at most ${limits.maxDepth} are allowed.`,
            { nodes: operation, extensions: { code: 'QUERY_TOO_DEEP', maxDepth: limits.maxDepth } }
          )
        )
      }
      if (cost > limits.maxComplexity) {
        context.reportError(
          new GraphQLError(
            `The query could cost ${cost} or more (fields times page sizes and groups); at most ` +
              `${limits.maxComplexity} is allowed. Ask for smaller pages, fewer groups or fewer nested ` +
              'connections.',
            {
              nodes: operation,
              extensions: { code: 'QUERY_TOO_COMPLEX', cost, maxComplexity: limits.maxComplexity }
            }
          )
        )
      }
      if (statements > limits.maxStatements) {
        context.reportError(
          new GraphQLError(
            `The query could run ${statements} or more SQL statements (each root query, root totalCount ` +
              `and relation); at most ${limits.maxStatements} are allowed. Ask for fewer fields at once.`,
            {
              nodes: operation,
              extensions: { code: 'QUERY_TOO_COMPLEX', statements, maxStatements: limits.maxStatements }
            }
          )
        )
      }
    }
  })
}
