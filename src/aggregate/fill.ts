import type { FieldError } from '../common/errors'
import { encodeValue } from '../resource/codec'
import type { Filter } from '../model/query'
import type { GroupFill } from '../model/aggregate'
import type { GroupColumn } from './plan-columns'
import type { RequestChecker } from './request-checker'
import { bucketSeries } from './time-zone'

/** A zero-filled series: every bucket's name, from the first to the last, which the statement joins to. */
export interface FillPlan {
  group: GroupColumn
  keys: string[]
}

/** What a fill needs besides the request. */
export interface FillContext {
  maxFillBuckets: number
  /** The filter the client gave (not the scope), whose bounds on a filled date field bound its series. */
  filter?: Filter
}

interface Bounds {
  from?: number
  to?: number
}

const instant = (value: unknown) =>
  value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN

/**
 * The range a filter allows a field, read from its comparisons on the field at the top level and inside
 * `and` (an `or` bounds nothing): gte, gt, eq, between, lte, lt; the tightest bound wins.
 */
export function filterBounds(filter: Filter | undefined, name: string, bounds: Bounds = {}): Bounds {
  if (!filter || typeof filter !== 'object') return bounds
  for (const member of Array.isArray(filter.and) ? filter.and : []) filterBounds(member, name, bounds)
  const comparison = filter[name] as Record<string, unknown> | undefined
  if (!comparison || typeof comparison !== 'object') return bounds
  const lower = (value: unknown) => {
    const time = instant(value)
    if (!Number.isNaN(time)) bounds.from = Math.max(bounds.from ?? -Infinity, time)
  }
  const upper = (value: unknown, exclusive = false) => {
    const time = instant(value) - (exclusive ? 1 : 0)
    if (!Number.isNaN(time)) bounds.to = Math.min(bounds.to ?? Infinity, time)
  }
  const between = comparison.between as { lower?: unknown; upper?: unknown } | undefined
  lower(comparison.gte)
  lower(comparison.gt)
  lower(comparison.eq)
  lower(between?.lower)
  upper(comparison.lte)
  upper(comparison.lt, true)
  upper(comparison.eq)
  upper(between?.upper)
  return bounds
}

/** A related date's filter: the one under its relations' names, `{todoItem: {created: ...}}` (top level only). */
export function relatedFilter(filter: Filter | undefined, group: GroupColumn) {
  let at = filter
  for (const relation of group.relations ?? []) {
    const inner = at?.[relation.name]
    at = inner && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Filter) : undefined
  }
  return at
}

/**
 * With `fill` on a date group: the series of its buckets from `from` to `to` (by default the filter's bounds
 * on the field), at most `maxFillBuckets` of them. A series fills one date grouped alone, on root aggregates.
 */
export function planFill(
  check: RequestChecker,
  groups: GroupColumn[],
  context: FillContext,
  partitioned: boolean
): FillPlan | undefined {
  const index = groups.findIndex((group) => group.fill)
  if (index < 0) return undefined
  const group = groups[index]
  const path = `groupBy.${index}.fill`
  if (partitioned) return check.problem(path, 'is available on root aggregates only')
  if (groups.length > 1) return check.problem(path, `fills the buckets of ${group.name} grouped alone`)
  const fill = group.fill as GroupFill
  const given = (key: 'from' | 'to') => {
    const value = fill[key]
    if (value === undefined || value === null) return undefined
    const encoded = encodeValue(group.field, value, `${path}.${key}`) as Date
    return encoded.getTime()
  }
  let from: number | undefined
  let to: number | undefined
  try {
    const bounds = filterBounds(relatedFilter(context.filter, group), group.field.name)
    from = given('from') ?? bounds.from
    to = given('to') ?? bounds.to
  } catch (error) {
    // A from or to that is no date: the 400 names it.
    check.errors.push(...((error as { errors?: FieldError[] }).errors ?? []))
    return undefined
  }
  if (from === undefined || to === undefined || !Number.isFinite(from) || !Number.isFinite(to)) {
    const { name } = group
    return check.problem(
      path,
      `needs a range: give from and to, or filter ${name} with gte and lte (or between)`
    )
  }
  if (from > to) return check.problem(path, 'has from after to')
  const keys = bucketSeries(from, to, group.bucket!, group.zone!, context.maxFillBuckets)
  if (!keys) {
    const max = context.maxFillBuckets
    return check.problem(
      path,
      `gives more than ${max} buckets (aggregate.maxFillBuckets); narrow the range or use a coarser bucket`
    )
  }
  return { group, keys }
}
