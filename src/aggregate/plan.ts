import { badField, badInput, type FieldError } from '../errors'
import { isNumericKind } from '../resource/field-kind'
import type { ResolvedField, ResolvedResource } from '../resource/resolve'
import {
  AGGREGATE_FUNCTIONS,
  DATE_BUCKETS,
  type AggregateFunction,
  type AggregateRequest,
  type DateBucket
} from '../query/model'

export const PARTITION_ALIAS = '__fq_partition'
const REQUEST_KEYS = new Set<string>(['groupBy', 'partitionBy', ...AGGREGATE_FUNCTIONS])
const NOTHING_SELECTED = 'No aggregate fields selected'

/**
 * A validated aggregate request: every name resolved to a field of the resource, every column given an alias
 * made by the plugin. Client strings never reach the SQL; only fields and aliases do.
 */
export interface GroupColumn {
  field: ResolvedField
  /** The qualified column, when not the field's own column of the aggregated table. */
  column?: string
  /** Date fields only: the bucket their values are truncated to. */
  bucket?: DateBucket
  alias: string
}

export interface AggregateColumn {
  fn: AggregateFunction
  field: ResolvedField
  alias: string
}

export interface AggregatePlan {
  groups: GroupColumn[]
  /** In the order of AGGREGATE_FUNCTIONS, then of the request. */
  aggregates: AggregateColumn[]
  partition?: GroupColumn
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
class RequestChecker {
  readonly errors: FieldError[] = []

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
    const { field: name, by } = entry as { field?: unknown; by?: unknown }
    const field = check.groupField(name, `${path}.field`)
    if (!field) return
    if (groups.some((group) => group.field === field)) {
      return check.problem(`${path}.field`, `${field.name} is grouped by twice`)
    }
    if (by !== undefined && by !== null) {
      if (field.kind !== 'date') return check.problem(`${path}.by`, 'applies to date fields only')
      if (!DATE_BUCKETS.includes(by as DateBucket)) {
        return check.problem(`${path}.by`, `must be one of ${DATE_BUCKETS.join(', ')}`)
      }
    }
    // Dates group by day unless asked otherwise, as GroupBy's default DAY does in GraphQL.
    const bucket = field.kind === 'date' ? ((by ?? 'DAY') as DateBucket) : undefined
    groups.push({ field, bucket, alias: `__fq_group_${groups.length}` })
  })
  return groups
}

function planColumns(check: RequestChecker): AggregateColumn[] {
  const columns: AggregateColumn[] = []
  for (const fn of AGGREGATE_FUNCTIONS) {
    check.list(fn).forEach((name, index) => {
      const field = check.field(name, `${fn}.${index}`)
      if (!field) return
      const problem = unsupported(fn, field)
      if (problem) return check.problem(`${fn}.${index}`, problem)
      // Asking twice for the same value is harmless; it is computed once.
      if (columns.some((column) => column.fn === fn && column.field === field)) return
      columns.push({ fn, field, alias: `__fq_${fn}_${columns.length}` })
    })
  }
  return columns
}

/** Checks the request against the resource and plans the statement; any problem is a 400. */
export function planAggregate(resource: ResolvedResource, request: AggregateRequest): AggregatePlan {
  if (!request || typeof request !== 'object' || Array.isArray(request)) {
    throw badField('aggregate', 'must be an object of groupBy, count, sum, avg, min, max')
  }
  const check = new RequestChecker(resource, request)
  for (const key of Object.keys(request)) {
    if (!REQUEST_KEYS.has(key)) check.problem(key, 'is not part of an aggregate request')
  }
  const groups = planGroups(check)
  const aggregates = planColumns(check)
  // The relation key the plugin partitions by is any stored field; only client groupBy needs groupable ones.
  const partitionField =
    request.partitionBy === undefined ? undefined : check.field(request.partitionBy, 'partitionBy')

  if (check.errors.length) throw badInput(check.errors)
  if (groups.length === 0 && aggregates.length === 0) {
    throw badInput([{ field: 'aggregate', message: NOTHING_SELECTED }], NOTHING_SELECTED)
  }
  const partition = partitionField && { field: partitionField, alias: PARTITION_ALIAS }
  return { groups, aggregates, partition }
}
