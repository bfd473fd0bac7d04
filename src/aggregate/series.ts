import {
  AGGREGATE_FUNCTIONS,
  DATE_BUCKETS,
  RUNNING_FUNCTIONS,
  type AggregateFunction,
  type AggregateRequest,
  type DateBucket
} from '../model/aggregate'
import type { AggregateColumn, GroupColumn } from './plan-columns'
import type { RequestChecker } from './request-checker'
import { filterBounds, relatedFilter, type FillContext, type FillPlan } from './fill'
import { bucketSeries } from './time-zone'
import { bucketSteps, comparablePeriod, type BucketStep } from './bucket-steps'

/**
 * Running totals and period-over-period over the one date bucket of a grouping. Running values accumulate
 * over the buckets in calendar order, restarting for each value of the other group keys (and per parent);
 * the compared buckets are found by name through `steps`, so a bucket without records answers 0 / null.
 */
export interface SeriesPlan {
  /** The date group whose buckets are ordered and compared. */
  group: GroupColumn
  running: AggregateColumn[]
  previous: AggregateColumn[]
  periodAgo: AggregateColumn[]
  period?: DateBucket
  /** With previous or periodAgo: every bucket of the range with the names of the buckets it is compared to. */
  steps?: BucketStep[]
}

type SeriesKey = 'running' | 'previous' | 'periodAgo'

/** The aggregate columns a selection (`{count: ['id'], sum: ['priority']}`) names, added hidden if need be. */
function selectionColumns(
  check: RequestChecker,
  key: SeriesKey,
  selection: unknown,
  functions: readonly AggregateFunction[]
): AggregateColumn[] {
  const columns: AggregateColumn[] = []
  if (selection === undefined || selection === null) return columns
  if (typeof selection !== 'object' || Array.isArray(selection)) {
    check.problem(key, `must be an object of ${functions.join(', ')} lists`)
    return columns
  }
  for (const [fn, names] of Object.entries(selection)) {
    if (key === 'periodAgo' && fn === 'period') continue
    if (!functions.includes(fn as AggregateFunction)) {
      check.problem(`${key}.${fn}`, `is not part of ${key} (use ${functions.join(', ')})`)
      continue
    }
    if (!Array.isArray(names)) {
      check.problem(`${key}.${fn}`, 'must be a list')
      continue
    }
    names.forEach((name, index) => {
      const column = check.column(fn as AggregateFunction, name, `${key}.${fn}.${index}`)
      if (column && !columns.includes(column)) columns.push(column)
    })
  }
  return columns
}

/** The range of buckets compared: the fill's series, else the buckets between the filter's bounds. */
function stepsOf(
  check: RequestChecker,
  group: GroupColumn,
  context: FillContext,
  fill: FillPlan | undefined,
  period: DateBucket | undefined,
  path: string
) {
  const bucket = group.bucket!
  const zone = group.zone!
  if (fill) return bucketSteps(fill.keys, bucket, zone, period)
  const { from, to } = filterBounds(relatedFilter(context.filter, group), group.field.name)
  if (from === undefined || to === undefined || from > to) {
    const name = group.field.name
    return check.problem(
      path,
      `compares the buckets of a range: filter ${name} with gte and lte (or between), or fill the buckets`
    )
  }
  const keys = bucketSeries(from, to, bucket, zone, context.maxFillBuckets)
  if (!keys) {
    return check.problem(
      path,
      `compares more than ${context.maxFillBuckets} buckets (aggregate.maxFillBuckets); narrow the filter's range`
    )
  }
  return bucketSteps(keys, bucket, zone, period)
}

/** `running`, `previous` and `periodAgo`: which columns, over which date group, compared with what. */
export function planSeries(
  check: RequestChecker,
  groups: GroupColumn[],
  request: AggregateRequest,
  context: FillContext,
  fill: FillPlan | undefined
): SeriesPlan | undefined {
  const running = selectionColumns(check, 'running', request.running, RUNNING_FUNCTIONS)
  const previous = selectionColumns(check, 'previous', request.previous, AGGREGATE_FUNCTIONS)
  const periodAgo = selectionColumns(check, 'periodAgo', request.periodAgo, AGGREGATE_FUNCTIONS)
  const asked = (['running', 'previous', 'periodAgo'] as const).filter(
    (key) => request[key] !== undefined && request[key] !== null
  )
  if (!asked.length) return undefined
  const dated = groups.filter((group) => group.bucket)
  if (dated.length !== 1) {
    const why = dated.length
      ? `orders by one date bucket: ${dated.map((group) => group.field.name).join(' and ')} are both grouped by date`
      : 'needs a date bucket in groupBy (e.g. {field: created, by: MONTH})'
    asked.forEach((key) => check.problem(key, why))
    return undefined
  }
  const group = dated[0]
  let period: DateBucket | undefined
  if (request.periodAgo !== undefined && request.periodAgo !== null) {
    period = request.periodAgo.period
    if (!DATE_BUCKETS.includes(period)) {
      check.problem('periodAgo.period', `must be one of ${DATE_BUCKETS.join(', ')}`)
      period = undefined
    } else if (!comparablePeriod(group.bucket!, period, DATE_BUCKETS)) {
      check.problem(
        'periodAgo.period',
        group.bucket === 'WEEK'
          ? 'must be YEAR (52 weeks) for weeks, which months and quarters do not hold whole'
          : `must be longer than the bucket ${group.bucket}`
      )
      period = undefined
    }
  }
  const compares = previous.length > 0 || (periodAgo.length > 0 && period !== undefined)
  const path = request.previous ? 'previous' : 'periodAgo'
  const steps = compares ? stepsOf(check, group, context, fill, period, path) : undefined
  return { group, running, previous, periodAgo, period, steps }
}

/** The columns of a series' values, beside the bucket's own aggregate of alias `alias`. */
export const runningAlias = (alias: string) => `${alias}_running`
export const previousAlias = (alias: string) => `${alias}_previous`
export const earlierAlias = (alias: string) => `${alias}_earlier`
/** The name of the bucket a step compares with (`__fq_previous` or `__fq_earlier`), null outside the range. */
export const stepAlias = (step: string) => `${step}_step`
