import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import { type Filter } from '../model/query'
import {
  AGGREGATE_FUNCTIONS,
  isCounting,
  type AggregateFunction,
  type AggregateHaving
} from '../model/aggregate'
import type { AggregateColumn } from './plan-columns'
import type { RequestChecker } from './request-checker'

/**
 * `having` as a filter over the aggregated rows: each aggregate a field named `count.id`, `avg.priority`, ...
 * whose column is the aggregate's alias. The filter compiler then checks and binds its comparisons as it
 * does any filter's, with every operator and limit filters have.
 */
export interface HavingPlan {
  filter: Filter
  /** The aggregated rows as a resource: one field per aggregate the condition reads. */
  resource: ResolvedResource
}

/** An aggregate as a field of the aggregated rows: counts are integers, sums and averages numbers. */
export function valueField({ fn, field, alias }: AggregateColumn): ResolvedField {
  const ownType = fn === 'min' || fn === 'max'
  return {
    ...field,
    name: `${fn}.${field.name}`,
    column: alias,
    kind: isCounting(fn) ? 'integer' : ownType ? field.kind : 'number',
    role: ownType ? field.role : 'filterable',
    nullable: !isCounting(fn),
    filterable: true,
    filterOnly: false,
    filterRequired: false,
    computed: undefined
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value)

/** Turns `{count: {id: {gt: 5}}, or: [...]}` into `{'count.id': {gt: 5}, or: [...]}`, collecting columns. */
function flatten(check: RequestChecker, having: unknown, path: string, used: Set<AggregateColumn>): Filter {
  if (!isObject(having)) {
    check.problem(path, `must be an object of and, or, ${AGGREGATE_FUNCTIONS.join(', ')}`)
    return {}
  }
  const filter: Filter = {}
  for (const [key, value] of Object.entries(having)) {
    if (value === undefined || value === null) continue
    const at = path ? `${path}.${key}` : key
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value)) check.problem(at, 'must be a list')
      else filter[key] = value.map((member, index) => flatten(check, member, `${at}.${index}`, used))
      continue
    }
    if (!AGGREGATE_FUNCTIONS.includes(key as AggregateFunction)) {
      check.problem(at, `is not an aggregate (use ${AGGREGATE_FUNCTIONS.join(', ')}, and, or)`)
      continue
    }
    if (!isObject(value)) {
      check.problem(at, 'must be an object of fields and their comparisons')
      continue
    }
    for (const [name, comparison] of Object.entries(value)) {
      const column = check.column(key as AggregateFunction, name, `${at}.${name}`)
      if (!column) continue
      used.add(column)
      filter[`${key}.${name}`] = comparison as Filter[string]
    }
  }
  return filter
}

export function planHaving(
  check: RequestChecker,
  resource: ResolvedResource,
  having: AggregateHaving | undefined
): HavingPlan | undefined {
  if (having === undefined || having === null) return undefined
  const used = new Set<AggregateColumn>()
  const filter = flatten(check, having, 'having', used)
  const fields = [...used].map(valueField)
  return {
    filter,
    resource: {
      ...resource,
      name: `${resource.name}Aggregate`,
      fields,
      fieldMap: new Map(fields.map((field) => [field.name, field]))
    }
  }
}
