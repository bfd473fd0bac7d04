import { badField, badInput, type FieldError } from '../common/errors'
import { isNumericKind } from '../resource/field-kind'
import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import { type Filter } from '../model/query'
import { AGGREGATE_FUNCTIONS, DATE_BUCKETS, type AggregateFunction, type AggregateRequest, type DateBucket, type GroupFill } from '../model/aggregate'
import { isTimeZone, UTC } from './time-zone'
import { planFill, type FillPlan } from './fill'
import { planHaving, type HavingPlan } from './having'
import { planOrder, type OrderTerm } from './order'

export const PARTITION_ALIAS = '__fq_partition'
const REQUEST_KEYS = new Set<string>([
  'groupBy',
  'partitionBy',
  'having',
  'sorting',
  'paging',
  'totalCount',
  ...AGGREGATE_FUNCTIONS
])
const NOTHING_SELECTED = 'No aggregate fields selected'

/**
 * A validated aggregate request: every name resolved to a field of the resource, every column given an alias
 * made by the plugin. Client strings never reach the SQL; only fields and aliases do.
 */
export interface GroupColumn {
  field: ResolvedField
  /** The qualified column, when not the field's own column of the aggregated table. */
  column?: string
  /** Date fields only: the bucket their values are truncated to, in `zone`'s calendar. */
  bucket?: DateBucket
  zone?: string
  fill?: GroupFill
  alias: string
}

export interface AggregateColumn {
  fn: AggregateFunction
  field: ResolvedField
  alias: string
  /** Computed for `having` or `sorting` only, not answered. */
  hidden?: boolean
}

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
export interface PlanContext {
  maxGroups: number
  maxFillBuckets: number
  /** The filter the client gave (not the scope), whose bounds on a filled date field bound its series. */
  filter?: Filter
}

const FILTER_ONLY = 'is filterOnly: it can be filtered on, never read'

/**
 * Why a function does not apply to a field, or undefined when it does. `count` of a filterOnly field is
 * allowed (how many records have a value, which a filter on `is: null` tells as well); the other functions
 * return values, which a filterOnly field never gives away.
 */
export function unsupported(fn: AggregateFunction, field: ResolvedField): string | undefined {
  // The spec: non-filterable fields are absent from aggregates (groupBy-only audit columns included).
  if (!field.filterable) return `${field.name} cannot be aggregated`
  if (fn !== 'count' && field.filterOnly) return `${field.name} ${FILTER_ONLY}`
  if ((fn === 'sum' || fn === 'avg') && !isNumericKind(field.kind))
    return `${fn} applies to numeric fields only`
  if ((fn === 'min' || fn === 'max') && field.kind === 'boolean') return `${fn} does not apply to booleans`
  return undefined
}

/** Group keys are returned with each group: filterable and groupBy fields, never filterOnly ones. */
export function groupable(field: ResolvedField) {
  return (field.filterable || field.groupable) && !field.filterOnly && !field.computed
}

/** Collects every problem of one request, so that the 400 names each offending entry (`sum.0`, ...). */
export class RequestChecker {
  readonly errors: FieldError[] = []
  readonly columns: AggregateColumn[] = []

  constructor(
    private resource: ResolvedResource,
    private request: AggregateRequest
  ) {}

  problem(field: string, message: string) {
    this.errors.push({ field, message })
    return undefined
  }

  field(name: unknown, path: string) {
    const field = typeof name === 'string' ? this.resource.fieldMap.get(name) : undefined
    if (field && !field.computed) return field
    return this.problem(path, `${this.resource.name} has no field "${name}"`)
  }

  groupField(name: unknown, path: string) {
    const field = this.field(name, path)
    if (field?.filterOnly) return this.problem(path, `${field.name} ${FILTER_ONLY}`)
    if (field && !groupable(field)) return this.problem(path, `${field.name} cannot be grouped by`)
    return field
  }

  /** The column of `fn` of the field named `name`, added (hidden) when the request does not answer it. */
  column(fn: AggregateFunction, name: unknown, path: string): AggregateColumn | undefined {
    const field = this.field(name, path)
    if (!field) return undefined
    const problem = unsupported(fn, field)
    if (problem) return this.problem(path, problem)
    const existing = this.columns.find((column) => column.fn === fn && column.field === field)
    if (existing) return existing
    const column = { fn, field, alias: `__fq_${fn}_${this.columns.length}`, hidden: true }
    this.columns.push(column)
    return column
  }

  list(key: keyof AggregateRequest): unknown[] {
    const value = this.request[key]
    if (value === undefined || value === null) return []
    if (Array.isArray(value)) return value
    this.problem(key, 'must be a list')
    return []
  }
}

function planGroups(check: RequestChecker): GroupColumn[] {
  const groups: GroupColumn[] = []
  check.list('groupBy').forEach((entry, index) => {
    const path = `groupBy.${index}`
    if (!entry || typeof entry !== 'object') return check.problem(path, 'must be {field, by?}')
    const { field: name, by, timeZone, fill, ...rest } = entry as Record<string, unknown>
    for (const key of Object.keys(rest)) check.problem(`${path}.${key}`, 'is not part of a groupBy entry')
    const field = check.groupField(name, `${path}.field`)
    if (!field) return
    if (groups.some((group) => group.field === field)) {
      return check.problem(`${path}.field`, `${field.name} is grouped by twice`)
    }
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
    if (field.kind !== 'date') return groups.push({ field, alias: `__fq_group_${groups.length}` })
    // Dates group by day unless asked otherwise, as GroupBy's default DAY does in GraphQL.
    const bucket = (by ?? 'DAY') as DateBucket
    groups.push({
      field,
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
    throw badField('aggregate', 'must be an object of groupBy, count, sum, avg, min, max')
  }
  const check = new RequestChecker(resource, request)
  for (const key of Object.keys(request)) {
    if (!REQUEST_KEYS.has(key)) check.problem(key, 'is not part of an aggregate request')
  }
  const groups = planGroups(check)
  planColumns(check)
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

  if (check.errors.length) throw badInput(check.errors)
  const aggregates = [
    ...check.columns.filter((column) => !column.hidden),
    ...check.columns.filter((c) => c.hidden)
  ]
  if (groups.length === 0 && aggregates.every((column) => column.hidden)) {
    throw badInput([{ field: 'aggregate', message: NOTHING_SELECTED }], NOTHING_SELECTED)
  }
  const partition = partitionField && { field: partitionField, alias: PARTITION_ALIAS }
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
    zones,
    maxGroups: context.maxGroups
  }
}
