import type { Keyset } from './query'

/**
 * A page of records as `find` returns it on the plugin's own routes. It carries `data`, `limit` and `skip` like
 * Feathers' paginated result, so hooks such as @feathersjs/schema's `resolveResult` treat it as a page.
 */
export interface Page<T> {
  data: T[]
  limit: number
  skip: number
  /** Whether records follow this page (read with one row more than asked, without counting). */
  hasNextPage: boolean
  /** Counted only when the query asked for `totalCount`. */
  total?: number
  /** `total` is the planner's estimate (`countStrategy`), not a count. */
  totalIsEstimate?: boolean
  /** For a keyset query that has a next page: the `keyset` to ask for it with. */
  keyset?: Keyset
  /** Keyset queries: the fields whose values place a record in the order (sort fields, then the id). */
  keysetFields?: string[]
  /** Keyset queries: whether records precede this page (read backwards: one row more than asked). */
  hasPreviousPage?: boolean
}

/** One partition's slice of a partitioned result: `data.slice(start, end)`. */
export interface Partition {
  key: unknown
  start: number
  end: number
  hasNextPage: boolean
  /** Keyset queries, as `Page.hasPreviousPage`. */
  hasPreviousPage?: boolean
  total?: number
}

/**
 * The result of a partitioned `find`: every partition's records one after the other in `data` (so hooks that
 * resolve a page's `data` resolve them all) and where each partition that has records lies in it.
 */
export interface PartitionedPages<T> {
  data: T[]
  skip: number
  partitions: Partition[]
  /** Keyset queries, as `Page.keysetFields`. */
  keysetFields?: string[]
}
