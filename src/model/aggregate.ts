import type { FieldComparison, SortDirection, SortNulls } from './query'

/** Aggregate requests and their answers: grouped counts, sums and the like of a resource's records. */
export type AggregateFunction =
  'count' | 'countDistinct' | 'sum' | 'avg' | 'min' | 'max' | StatisticalFunction

/**
 * Deviations and variances (population and sample: no bare `stddev`, as SQL dialects disagree on what it
 * means) and the median, interpolated between the two middle values as PostgreSQL's `percentile_cont(0.5)`.
 */
export type StatisticalFunction = 'stddevPop' | 'stddevSamp' | 'varPop' | 'varSamp' | 'median'

/** What a planned aggregate column computes: a function of the request, or one percentile. */
export type ColumnFunction = AggregateFunction | 'percentile'

export const STATISTICAL_FUNCTIONS: StatisticalFunction[] = [
  'stddevPop',
  'stddevSamp',
  'varPop',
  'varSamp',
  'median'
]

export const AGGREGATE_FUNCTIONS: AggregateFunction[] = [
  'count',
  'countDistinct',
  'sum',
  'avg',
  'min',
  'max',
  ...STATISTICAL_FUNCTIONS
]

export const isStatistical = (fn: ColumnFunction): fn is StatisticalFunction | 'percentile' =>
  fn === 'percentile' || (STATISTICAL_FUNCTIONS as AggregateFunction[]).includes(fn)

/**
 * `percentile: [{p: 0.95, fields: ['duration']}]`: continuous percentiles (PostgreSQL's `percentile_cont`),
 * `0 <= p <= 1`, answered as `percentile: {'0.95': {duration}}`. Not a list of fields like the other
 * functions, so not in AGGREGATE_FUNCTIONS; answered only, not sorted or filtered by (the median is).
 */
export interface PercentileRequest {
  p: number
  fields: string[]
}

/** Counts are integers, 0 for no records; the other functions answer null for no values. */
export const isCounting = (fn: ColumnFunction) => fn === 'count' || fn === 'countDistinct'

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
  stddevPop?: Record<string, FieldComparison>
  stddevSamp?: Record<string, FieldComparison>
  varPop?: Record<string, FieldComparison>
  varSamp?: Record<string, FieldComparison>
  median?: Record<string, FieldComparison>
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
  stddevPop?: string[]
  stddevSamp?: string[]
  varPop?: string[]
  varSamp?: string[]
  median?: string[]
  percentile?: PercentileRequest[]
  having?: AggregateHaving
  /** The order of the groups; ties, and groups after these terms, go by the group keys ascending. */
  sorting?: AggregateSortField[]
  /** One page of the groups; the result is then an `AggregatePage` (per partition with `partitionBy`). */
  paging?: { limit?: number; offset?: number }
  /** With `paging`: count every group (the page's `total`). */
  totalCount?: boolean
  /** Aggregate per distinct value of this field (relation aggregates for many parents in one statement). */
  partitionBy?: string
  /** Over a date bucket: each group's cumulative count, sum, min or max from the first bucket on. */
  running?: RunningSelection
  /** Over a date bucket: the same aggregates of the calendar-preceding bucket (0 / null when it had none). */
  previous?: AggregateSelection
  /** Over a date bucket: the same aggregates of the same bucket one `period` earlier (a DAY a WEEK earlier). */
  periodAgo?: AggregateSelection & { period: DateBucket }
}

/** Which aggregates of which fields, as in a request's `count`, `sum`, ... lists. */
export type AggregateSelection = Partial<Record<AggregateFunction, string[]>>

/** The functions whose running form is meaningful: a sum of counts, of sums, the least and greatest so far. */
export type RunningFunction = 'count' | 'sum' | 'min' | 'max'

export const RUNNING_FUNCTIONS: RunningFunction[] = ['count', 'sum', 'min', 'max']

export type RunningSelection = Partial<Record<RunningFunction, string[]>>

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
  stddevPop?: Record<string, number | null>
  stddevSamp?: Record<string, number | null>
  varPop?: Record<string, number | null>
  varSamp?: Record<string, number | null>
  median?: Record<string, number | null>
  /** By `p` as JavaScript writes it (`String(0.95)`), then by field. */
  percentile?: Record<string, Record<string, number | null>>
  /**
   * With `running` in the request: the cumulative values up to and including this bucket; null for the group of
   * records without a date, which has no place in the calendar and counts in no other bucket's running values.
   */
  running?: AggregateValues | null
  /**
   * With `previous` in the request: the values of the calendar-preceding bucket; null when that bucket lies
   * outside the range the filter (or fill) spans, whose records the request did not read.
   */
  previous?: AggregateValues | null
  /** With `periodAgo` in the request: the values of the same bucket one period earlier (null as `previous`). */
  periodAgo?: AggregateValues | null
}

/** The aggregates of one group without its keys: what `running`, `previous` and `periodAgo` answer. */
export type AggregateValues = Omit<AggregateResponse, 'groupBy' | 'running' | 'previous' | 'periodAgo'>

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
