/**
 * The transport-free query model. REST query strings, GraphQL arguments and CSV export requests are all
 * translated into these shapes, and one compiler turns them into SQL.
 */

export type Scalar = string | number | boolean | Date

export interface Between {
  lower: Scalar
  upper: Scalar
}

/** Operators on one field. Several operators in one comparison are ANDed (`{gte: 1, lte: 3}` is a range). */
export interface FieldComparison {
  is?: boolean | null
  isNot?: boolean | null
  eq?: Scalar
  neq?: Scalar
  gt?: Scalar
  gte?: Scalar
  lt?: Scalar
  lte?: Scalar
  like?: string
  notLike?: string
  iLike?: string
  notILike?: string
  in?: Scalar[]
  notIn?: Scalar[]
  between?: Between
  notBetween?: Between
}

export type ComparisonOperator = keyof FieldComparison

export const COMPARISON_OPERATORS: ComparisonOperator[] = [
  'is',
  'isNot',
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'notLike',
  'iLike',
  'notILike',
  'in',
  'notIn',
  'between',
  'notBetween'
]

/**
 * `{and, or}` group sub-filters; every other key is a field name with its comparison, or a relation name with
 * a filter of the related resource: at least one related record (that the caller may read) matches it.
 * Siblings are ANDed.
 */
export interface Filter {
  and?: Filter[]
  or?: Filter[]
  [field: string]: FieldComparison | Filter | Filter[] | undefined
}

export type SortDirection = 'ASC' | 'DESC'
export type SortNulls = 'NULLS_FIRST' | 'NULLS_LAST'

export interface SortField {
  field: string
  direction: SortDirection
  nulls?: SortNulls
}

export interface OffsetPaging {
  limit: number
  offset?: number
}

/** What `params.query` holds for every method of a resource service. */
export interface ResourceQuery {
  filter?: Filter
  sorting?: SortField[]
  /** Without paging, `find` returns every matching record as an array. */
  paging?: OffsetPaging
  /** Free-form search text; the core gives it no meaning, a hook translates it into `filter`. */
  search?: string
  /** Run the count query and return `totalCount`. */
  totalCount?: boolean
  /** Apply paging per distinct value of this field (one page per parent when loading relations). */
  partitionBy?: string
  /**
   * Many-to-many: the records linked to `parents` through a join resource, each once per parent it is linked
   * to, paged (`find`) or aggregated (`aggregate`) per parent, like `partitionBy`.
   */
  through?: LinkQuery
  /**
   * The fields the caller needs (GraphQL sets the ones a client selected). Records then carry those, the id
   * and what the statement needs (partition and keyset sort keys), like Feathers' `$select`; a computed field
   * brings every field. A hook that needs another field adds it here. Absent: every field.
   */
  select?: string[]
  /**
   * Keyset paging: `paging.limit` records after (or before) a position in the order, found by the values of
   * the sort fields and the id rather than by counting (how the CSV export reads every record batch by batch,
   * and GraphQL's keyset cursors). The page answers with `keysetFields` and the `keyset` of its next page.
   * With `partitionBy`, the same position in every partition.
   */
  keyset?: Keyset
}

/** The links a many-to-many relation reads through: records of the join resource. */
export interface LinkQuery {
  /** The join resource's name. */
  resource: string
  /** Its field holding the parent's id, by which pages and aggregates are partitioned. */
  foreignKey: string
  /** Its field holding the id of this resource's record. */
  otherKey: string
  /** The parents' ids. */
  parents: Scalar[]
}

/**
 * Where a keyset page starts: after the record whose sort fields and id hold the values of `after` (by
 * field name, as records hold them); nothing: at the start. `backward` reads the `limit` records before
 * `before` (or the last ones), returned in the query's order.
 */
export interface Keyset {
  after?: Record<string, unknown>
  before?: Record<string, unknown>
  backward?: boolean
}

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

export type AggregateFunction = 'count' | 'countDistinct' | 'sum' | 'avg' | 'min' | 'max'

export const AGGREGATE_FUNCTIONS: AggregateFunction[] = ['count', 'countDistinct', 'sum', 'avg', 'min', 'max']

/** Counts are integers, 0 for no records; the other functions answer null for no values. */
export const isCounting = (fn: AggregateFunction) => fn === 'count' || fn === 'countDistinct'

export type DateBucket = 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'QUARTER' | 'YEAR'

export const DATE_BUCKETS: DateBucket[] = ['HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR']

/** Every bucket of a date group between two instants, those without records counting zero. */
export interface GroupFill {
  /** The first bucket is the one holding `from`; by default the lower bound of the filter on the field. */
  from?: string
  /** The last bucket is the one holding `to`; by default the upper bound of the filter on the field. */
  to?: string
}

export interface GroupByField {
  field: string
  /** Date fields only: the bucket the values are truncated to. */
  by?: DateBucket
  /** Date fields only: the IANA time zone whose calendar the buckets follow (default UTC). */
  timeZone?: string
  /** Date fields only: answer every bucket of the range, not only those holding records. */
  fill?: GroupFill
}

/**
 * A condition on the aggregates of each group (SQL's HAVING): `{ count: { id: { gt: 5 } } }`, with the
 * comparison operators of filters, composed with `and` and `or` like a filter.
 */
export interface AggregateHaving {
  and?: AggregateHaving[]
  or?: AggregateHaving[]
  count?: Record<string, FieldComparison>
  countDistinct?: Record<string, FieldComparison>
  sum?: Record<string, FieldComparison>
  avg?: Record<string, FieldComparison>
  min?: Record<string, FieldComparison>
  max?: Record<string, FieldComparison>
}

/** What groups are ordered by: a group key (no `aggregate`), or one aggregate of a field. */
export interface AggregateSortField {
  field: string
  aggregate?: AggregateFunction
  direction: SortDirection
  nulls?: SortNulls
}

/** Which aggregates to compute; the filter comes from `params.query.filter` like every other method. */
export interface AggregateRequest {
  groupBy?: GroupByField[]
  count?: string[]
  countDistinct?: string[]
  sum?: string[]
  avg?: string[]
  min?: string[]
  max?: string[]
  having?: AggregateHaving
  /** The order of the groups; ties, and groups after these terms, go by the group keys ascending. */
  sorting?: AggregateSortField[]
  /** One page of the groups; the result is then an `AggregatePage` (per partition with `partitionBy`). */
  paging?: { limit?: number; offset?: number }
  /** With `paging`: count every group (the page's `total`). */
  totalCount?: boolean
  /** Aggregate per distinct value of this field (relation aggregates for many parents in one statement). */
  partitionBy?: string
}

/** One page of groups: `aggregate` answers this when the request has `paging`. */
export interface AggregatePage {
  data: AggregateResponse[]
  limit: number
  skip: number
  hasNextPage: boolean
  total?: number
}

export interface AggregateResponse {
  groupBy?: Record<string, unknown>
  count?: Record<string, number>
  countDistinct?: Record<string, number>
  sum?: Record<string, number | null>
  avg?: Record<string, number | null>
  min?: Record<string, unknown>
  max?: Record<string, unknown>
}

/**
 * The result of an aggregate with `partitionBy`: the responses of each partition key that has matching
 * records, ordered by key, and `empty`, what any other key gets (no groups, or without groupBy one entry of
 * zero counts and null values), so that callers need not know how an empty set aggregates.
 */
export interface PartitionedAggregates {
  /** With `paging`, each partition's responses are its page, `hasNextPage` telling whether groups follow. */
  partitions: Array<{ key: unknown; responses: AggregateResponse[]; hasNextPage?: boolean }>
  empty: AggregateResponse[]
}
