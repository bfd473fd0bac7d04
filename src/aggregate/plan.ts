import type { CallerAccess } from '../authorization/field-rules'
import { badField, badInput } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import { UTC } from '../dialect/dialect'
import {
  AGGREGATE_FUNCTIONS,
  DATE_BUCKETS,
  type AggregateRequest,
  type DateBucket,
  type GroupFill
} from '../model/aggregate'
import { isTimeZone } from '../dialect/zone-offsets'
import type { AggregateColumn, GroupColumn } from './plan-columns'
import { RequestChecker } from './request-checker'
import { planFill, type FillContext, type FillPlan } from './fill'
import { planHaving, type HavingPlan } from './having'
import { planOrder, type OrderTerm } from './order'
import { planSeries, type SeriesPlan } from './series'

export const PARTITION_ALIAS = '__fq_partition'
const REQUEST_KEYS = new Set<string>([
  'groupBy',
  'partitionBy',
  'having',
  'sorting',
  'paging',
  'totalCount',
  'running',
  'previous',
  'periodAgo',
  'percentile',
  ...AGGREGATE_FUNCTIONS
])
const NOTHING_SELECTED = 'No aggregate fields selected'

export interface AggregatePaging {
  limit: number
  offset: number
}

export interface AggregatePlan {
  groups: GroupColumn[]
  /** In the order of AGGREGATE_FUNCTIONS, then of the request; hidden ones after them. */
  aggregates: AggregateColumn[]
  partition?: GroupColumn
  having?: HavingPlan
  /** The requested order, then the group keys ascending: a total order, so pages never overlap. */
  order: OrderTerm[]
  paging?: AggregatePaging
  totalCount: boolean
  fill?: FillPlan
  /** Running totals and period-over-period over the date bucket. */
  series?: SeriesPlan
  /** The time zones other than UTC that buckets are computed in. */
  zones: string[]
  /** Most groups the statement may answer without paging. */
  maxGroups: number
}

/** The partition key (when any), then the group keys: what the statement groups by, in order. */
export function groupKeys(plan: AggregatePlan): GroupColumn[] {
  return plan.partition ? [plan.partition, ...plan.groups] : plan.groups
}

/** What the plan needs besides the request: the resource's limits and the call's filter (for fill). */
export interface PlanContext extends FillContext {
  maxGroups: number
  /** How many to-one relations a group key may go through (`limits.maxRelationDepth`; 0 by default). */
  maxRelationDepth?: number
  /** The caller's field rules, when any apply to the call. */
  access?: CallerAccess
}

function planGroups(check: RequestChecker): GroupColumn[] {
  const groups: GroupColumn[] = []
  check.list('groupBy').forEach((entry, index) => {
    const path = `groupBy.${index}`
    if (!entry || typeof entry !== 'object') return check.problem(path, 'must be {field, by?}')
    const { field: name, by, timeZone, fill, ...rest } = entry as Record<string, unknown>
    for (const key of Object.keys(rest)) check.problem(`${path}.${key}`, 'is not part of a groupBy entry')
    const found = check.groupPath(name, `${path}.field`)
    if (!found) return
    const { field, relations } = found
    if (groups.some((group) => group.name === found.name)) {
      return check.problem(`${path}.field`, `${found.name} is grouped by twice`)
    }
    const key = { name: found.name, field, ...(relations.length ? { relations } : {}) }
    const given = { by, timeZone, fill }
    for (const key of Object.keys(given) as Array<keyof typeof given>) {
      if (given[key] !== undefined && given[key] !== null && field.kind !== 'date') {
        return check.problem(`${path}.${key}`, 'applies to date fields only')
      }
    }
    if (by !== undefined && by !== null && !DATE_BUCKETS.includes(by as DateBucket)) {
      return check.problem(`${path}.by`, `must be one of ${DATE_BUCKETS.join(', ')}`)
    }
    const zone = timeZone === undefined || timeZone === null ? UTC : zoneName(timeZone)
    if (zone === undefined) {
      return check.problem(`${path}.timeZone`, 'must be an IANA time zone name, e.g. Europe/Berlin')
    }
    if (fill !== undefined && fill !== null && (typeof fill !== 'object' || Array.isArray(fill))) {
      return check.problem(`${path}.fill`, 'must be {from?, to?}')
    }
    if (field.kind !== 'date') return groups.push({ ...key, alias: `__fq_group_${groups.length}` })
    // Dates group by day unless asked otherwise, as GroupBy's default DAY does in GraphQL.
    const bucket = (by ?? 'DAY') as DateBucket
    groups.push({
      ...key,
      bucket,
      zone,
      fill: (fill ?? undefined) as GroupFill | undefined,
      alias: `__fq_group_${groups.length}`
    })
  })
  return groups
}

/**
 * The canonical name of a time zone Node knows (`europe/berlin` is `Europe/Berlin`), or undefined. UTC in any
 * spelling is `UTC`, which every database computes without time-zone data.
 */
function zoneName(zone: unknown) {
  if (typeof zone !== 'string' || !isTimeZone(zone)) return undefined
  const name = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone
  return ['UTC', 'ETC/UTC', 'GMT', 'ETC/GMT', 'Z'].includes(name.toUpperCase()) ? UTC : name
}

/** The answered columns; asking twice for the same value is harmless, it is computed once. */
function planColumns(check: RequestChecker) {
  for (const fn of AGGREGATE_FUNCTIONS) {
    check.list(fn).forEach((name, index) => {
      const column = check.column(fn, name, `${fn}.${index}`)
      if (column) column.hidden = false
    })
  }
}

/** `percentile: [{p, fields}]`: each p a number from 0 to 1, each field numeric. */
function planPercentiles(check: RequestChecker) {
  check.list('percentile').forEach((entry, index) => {
    const path = `percentile.${index}`
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      return check.problem(path, 'must be {p, fields}')
    }
    const { p, fields, ...rest } = entry as Record<string, unknown>
    for (const key of Object.keys(rest)) check.problem(`${path}.${key}`, 'is not part of a percentile entry')
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
      return check.problem(`${path}.p`, 'must be a number from 0 to 1')
    }
    if (!Array.isArray(fields)) return check.problem(`${path}.fields`, 'must be a list')
    fields.forEach((name, at) => {
      const column = check.column('percentile', name, `${path}.fields.${at}`, p)
      if (column) column.hidden = false
    })
  })
}

/** `paging: {limit, offset}`: a page of at most maxGroups groups (all of them by default). */
function planPaging(check: RequestChecker, request: AggregateRequest, maxGroups: number) {
  const { paging } = request
  if (paging === undefined || paging === null) return undefined
  if (typeof paging !== 'object' || Array.isArray(paging))
    return check.problem('paging', 'must be {limit, offset}')
  const { limit = maxGroups, offset = 0, ...rest } = paging
  for (const key of Object.keys(rest))
    check.problem(`paging.${key}`, 'is not part of paging (use limit and offset)')
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > maxGroups) {
    check.problem('paging.limit', `must be an integer from 1 to ${maxGroups}`)
  }
  if (!Number.isSafeInteger(offset) || offset < 0)
    check.problem('paging.offset', 'must be an integer of at least 0')
  return { limit, offset }
}

/** Checks the request against the resource and plans the statement; any problem is a 400. */
export function planAggregate(
  resource: ResolvedResource,
  request: AggregateRequest,
  context: PlanContext
): AggregatePlan {
  if (!request || typeof request !== 'object' || Array.isArray(request)) {
    throw badField('aggregate', `must be an object of groupBy, ${AGGREGATE_FUNCTIONS.join(', ')}`)
  }
  const check = new RequestChecker(resource, request, context.maxRelationDepth, context.access)
  for (const key of Object.keys(request)) {
    if (!REQUEST_KEYS.has(key)) check.problem(key, 'is not part of an aggregate request')
  }
  const groups = planGroups(check)
  planColumns(check)
  planPercentiles(check)
  const having = planHaving(check, resource, request.having)
  const order = planOrder(check, groups, request.sorting)
  const paging = planPaging(check, request, context.maxGroups)
  const totalCount = request.totalCount === true
  if (request.totalCount !== undefined && typeof request.totalCount !== 'boolean') {
    check.problem('totalCount', 'must be true or false')
  } else if (totalCount && !paging) {
    check.problem('totalCount', 'counts the groups of paged requests only (give paging)')
  }
  // The relation key the plugin partitions by is any stored field; only client groupBy needs groupable ones.
  const partitionField =
    request.partitionBy === undefined ? undefined : check.field(request.partitionBy, 'partitionBy')
  if (partitionField && totalCount) check.problem('totalCount', 'is not available on relation aggregates')
  const fill = planFill(check, groups, context, partitionField !== undefined)
  const series = planSeries(check, groups, request, context, fill)

  if (check.errors.length) throw badInput(check.errors)
  const aggregates = [
    ...check.columns.filter((column) => !column.hidden),
    ...check.columns.filter((c) => c.hidden)
  ]
  if (groups.length === 0 && aggregates.every((column) => column.hidden)) {
    throw badInput([{ field: 'aggregate', message: NOTHING_SELECTED }], NOTHING_SELECTED)
  }
  const partition = partitionField && {
    name: partitionField.name,
    field: partitionField,
    alias: PARTITION_ALIAS
  }
  const zones = [
    ...new Set(groups.map((group) => group.zone).filter((zone) => zone && zone !== UTC))
  ] as string[]
  return {
    groups,
    aggregates,
    partition,
    having,
    order,
    paging,
    totalCount,
    fill,
    series,
    zones,
    maxGroups: context.maxGroups
  }
}
