import type { FieldError } from '../common/errors'
import { aggregateProblem, FILTER_ONLY } from '../resource/aggregatable'
import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import type { AggregateRequest, ColumnFunction } from '../model/aggregate'
import type { AggregateColumn } from './plan-columns'
import { relationPath, type RelationPath } from '../query/relation-path'
import type { CallerAccess, FieldUse } from '../authorization/field-rules'

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
    private request: AggregateRequest,
    /** How many to-one relations a group key may go through (0: own fields only). */
    private maxRelationDepth = 0,
    /** What the caller's field rules allow, on this resource and those its group keys reach. */
    private access?: CallerAccess
  ) {}

  /** Whether the caller's rules allow `use` of the field; if not, the problem is noted. */
  private ruled(resource: ResolvedResource, field: ResolvedField, use: FieldUse, path: string) {
    const access = this.access?.of(resource)
    if (!access || access.allows(field, use)) return true
    this.problem(path, access.refusal(field.name, use))
    return false
  }

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
    if (field && !this.ruled(this.resource, field, 'groupBy', path)) return undefined
    return field
  }

  /**
   * A group key: an own field, or a dotted path through to-one relations to a field of the related
   * resource that it lets clients group by and reads back (never a hidden one).
   */
  groupPath(name: unknown, path: string): RelationPath | undefined {
    if (typeof name !== 'string' || !name.includes('.')) {
      const field = this.groupField(name, path)
      return field && { name: field.name, relations: [], resource: this.resource, field }
    }
    const found = relationPath(this.resource, name, this.maxRelationDepth)
    if ('problem' in found) return this.problem(path, found.problem)
    const { field, resource } = found
    if (field.filterOnly) return this.problem(path, `${resource.name}.${field.name} ${FILTER_ONLY}`)
    if (field.hidden || !groupable(field)) {
      return this.problem(path, `${resource.name}.${field.name} cannot be grouped by`)
    }
    if (!this.ruled(resource, field, 'groupBy', path)) return undefined
    return found
  }

  /** The column of `fn` of the field named `name`, added (hidden) when the request does not answer it. */
  column(fn: ColumnFunction, name: unknown, path: string, p?: number): AggregateColumn | undefined {
    const field = this.field(name, path)
    if (!field) return undefined
    const problem = aggregateProblem(fn, field)
    if (problem) return this.problem(path, problem)
    if (!this.ruled(this.resource, field, 'aggregate', path)) return undefined
    if (fn !== 'count' && !this.ruled(this.resource, field, 'read', path)) return undefined
    const existing = this.columns.find(
      (column) => column.fn === fn && column.field === field && column.p === p
    )
    if (existing) return existing
    const column = {
      fn,
      field,
      alias: `__fq_${fn}_${this.columns.length}`,
      hidden: true,
      ...(p === undefined ? {} : { p })
    }
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
