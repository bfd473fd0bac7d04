import { ConfigurationError } from '../common/errors'
import { DEFAULTS } from './defaults'

/**
 * What one filter may hold, whatever surface it comes from (GraphQL, REST, export, aggregates, calls from
 * hooks): the authorization filter, `defaultFilter` and a search hook's conditions count with the client's.
 * The defaults stay well below what every supported database runs (SQLite stops at an expression depth of
 * 1,000, 32,766 bound values and LIKE patterns of 50,000 bytes), so a filter is answered or refused with a
 * 400, never a database error. And what the statements kept for the next call of their shape may hold, since
 * clients choose the shapes. `feathersQuery({ limits })` changes them.
 */
export interface QueryLimits {
  /** Deepest nesting of `and`/`or` groups (default 16). */
  maxFilterDepth?: number
  /** Most comparisons (an operator on a field) in one filter, and members of one `and`/`or` (default 100). */
  maxComparisons?: number
  /** Most values in one `in`/`notIn` list (default 1,000). */
  maxListLength?: number
  /** Most values one filter binds, each member of a list counted (default 10,000). */
  maxFilterValues?: number
  /** Longest `like`/`notLike`/`iLike`/`notILike` pattern, in characters (default 1,000). */
  maxPatternLength?: number
  /**
   * Most relation filters (each an EXISTS subquery) in one filter, those the related resources' `authorize`
   * adds included (default 10); also the most relations one sort or grouping joins.
   */
  maxRelationFilters?: number
  /**
   * Deepest nesting of relation filters within relation filters (default 3); also the most to-one relations
   * a group key or sort path goes through.
   */
  maxRelationDepth?: number
  /**
   * Memory the statements compiled once per shape hold, per resource: SQL text and bindings, in bytes
   * (default 1 MB; and at most 500 statements). The oldest go first; a larger statement is built per call.
   */
  compiledStatementBytes?: number
  /**
   * SQL text of the statements a better-sqlite3 connection keeps prepared, in bytes (default 1 MB; and at
   * most 500). SQLite holds many times as much memory of its own for them.
   */
  preparedStatementBytes?: number
}

export const DEFAULT_QUERY_LIMITS: Readonly<Required<QueryLimits>> = DEFAULTS.queryLimits

/** Limits this module resolved: the plugin resolves them once and hands them to every service as they are. */
const resolvedLimits = new WeakSet<object>()

/** The limits with their defaults; a limit that is not a positive integer stops start-up. */
export function resolveQueryLimits(limits: QueryLimits = {}): Readonly<Required<QueryLimits>> {
  if (resolvedLimits.has(limits)) return limits as Readonly<Required<QueryLimits>>
  const resolved = { ...DEFAULT_QUERY_LIMITS }
  for (const [name, value] of Object.entries(limits)) {
    if (value === undefined) continue
    if (!(name in resolved)) throw new ConfigurationError(`limits.${name} is not a query limit`)
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ConfigurationError(`limits.${name} must be a positive integer, not ${String(value)}`)
    }
    resolved[name as keyof QueryLimits] = value
  }
  Object.freeze(resolved)
  resolvedLimits.add(resolved)
  return resolved
}
