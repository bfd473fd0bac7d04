import { GeneralError } from '@feathersjs/errors'
import { withoutFields } from '../common/without-fields'
import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import { reachableResources } from '../resource/reachable'
import type { ResourceParams, ResourceRecord } from '../model/records'
import { FIELD_USES, type FieldRules, type FieldUse } from '../resource/field-rules-option'

export type { FieldRule, FieldRules, FieldRulesOption, FieldUse } from '../resource/field-rules-option'

const VERBS: Record<FieldUse, string> = {
  read: 'read',
  filter: 'filtered on',
  sort: 'used to sort',
  groupBy: 'used to group',
  aggregate: 'aggregated'
}

/**
 * What one caller may do with each field of one resource. Reading a value is what grouping by it and every
 * aggregate but `count` give away, so a field the caller may not read can only be filtered on, sorted by
 * and counted, as a `filterOnly` field can.
 */
export class FieldAccess {
  /** The uses taken away, by field name. */
  private readonly denied = new Map<string, Set<FieldUse>>()
  /** The fields this caller may not read, in the resource's order. */
  readonly unreadable: readonly string[]
  /** Equal keys, equal access: what caches of per-caller shapes are keyed by. */
  readonly key: string

  constructor(
    readonly resource: ResolvedResource,
    rules: FieldRules
  ) {
    for (const [name, rule] of Object.entries(rules)) {
      if (rule === true || rule === undefined) continue
      if (rule !== false && (typeof rule !== 'object' || rule === null))
        throw new GeneralError(
          `fieldRules of ${resource.name}: ${name} must be true, false or { read?, filter?, ... }`
        )
      const field = resource.fieldMap.get(name)
      if (!field)
        throw new GeneralError(`fieldRules of ${resource.name} name "${name}", which is no field of it`)
      const uses = new Set(FIELD_USES.filter((use) => rule === false || rule[use] === false))
      if (uses.has('read')) {
        uses.add('groupBy')
        if (field === resource.idField)
          throw new GeneralError(`fieldRules of ${resource.name} may not hide its id, ${name}`)
      }
      if (uses.size > 0) this.denied.set(name, uses)
    }
    this.unreadable = resource.fields
      .filter((field) => this.denied.get(field.name)?.has('read'))
      .map((field) => field.name)
    this.key = [...this.denied].map(([name, uses]) => `${name}:${[...uses].join('+')}`).join(',')
    this.strip = withoutFields(this.unreadable)
  }

  get restricts() {
    return this.denied.size > 0
  }

  allows(field: ResolvedField | string, use: FieldUse): boolean {
    const name = typeof field === 'string' ? field : field.name
    return !this.denied.get(name)?.has(use)
  }

  /** `count` of a field tells how many records have it; any other function tells its values. */
  allowsAggregate(field: ResolvedField | string, fn: string): boolean {
    return this.allows(field, 'aggregate') && (fn === 'count' || this.allows(field, 'read'))
  }

  /** The 400's message for a use this caller may not make of `name`. */
  refusal(name: string, use: FieldUse): string {
    return `${this.resource.name}.${name} may not be ${VERBS[use]} by this caller`
  }

  /** The record without the fields the caller may not read; other properties stay. */
  readonly strip: (record: ResourceRecord) => ResourceRecord
}

/** The field access of one call, for its resource and every resource its relations reach. */
export interface CallerAccess {
  of(resource: ResolvedResource): FieldAccess | undefined
}

/** Per params object, per resource called: the evaluation of the rules its call reaches. */
const evaluated = new WeakMap<object, Map<ResolvedResource, Promise<CallerAccess | undefined>>>()

/**
 * The resources with `fieldRules` that a request on `resource` can reach through its relations (filters,
 * sorts and group keys by relation paths, many-to-many links): their rules are evaluated together, once per
 * call, so that every check after that is synchronous.
 */
export function ruledResources(resource: ResolvedResource): ResolvedResource[] {
  return reachableResources(resource).filter((reached) => reached.definition.fieldRules)
}

const reachable = new WeakMap<ResolvedResource, ResolvedResource[]>()

/**
 * The field access of a client's call (`params.provider` set), or undefined when no rule applies to it. Each
 * params object is evaluated once, however many statements and services its call goes through.
 */
export function callerAccess(
  resource: ResolvedResource,
  params: ResourceParams
): Promise<CallerAccess | undefined> | undefined {
  if (!params.provider) return undefined
  let resources = reachable.get(resource)
  if (!resources) reachable.set(resource, (resources = ruledResources(resource)))
  if (resources.length === 0) return undefined
  let calls = evaluated.get(params)
  if (!calls) evaluated.set(params, (calls = new Map()))
  let evaluating = calls.get(resource)
  if (!evaluating) calls.set(resource, (evaluating = evaluate(resources, params)))
  return evaluating
}

async function evaluate(resources: ResolvedResource[], params: ResourceParams) {
  const access = new Map<ResolvedResource, FieldAccess>()
  for (const resource of resources) {
    const rules = await resource.definition.fieldRules?.(params)
    if (!rules) continue
    const fieldAccess = new FieldAccess(resource, rules)
    if (fieldAccess.restricts) access.set(resource, fieldAccess)
  }
  if (access.size === 0) return undefined
  return { of: (resource: ResolvedResource) => access.get(resource) }
}

const WITHHELD = Symbol('feathers-query.withheldFields')

/**
 * A method's answer as the caller may read it: records (alone, in a list, in a page's `data`) without the
 * fields it may not read. A page keeps the names it withheld, for a CSV export's header.
 */
export function readableResult<T>(result: T, access: FieldAccess | undefined): T {
  if (!access || access.unreadable.length === 0 || !result || typeof result !== 'object') return result
  if (Array.isArray(result)) return result.map((record) => access.strip(record)) as T
  const page = result as { data?: unknown }
  if (!Array.isArray(page.data)) return access.strip(result as ResourceRecord) as T
  const readable = { ...page, data: page.data.map((record: ResourceRecord) => access.strip(record)) }
  Object.defineProperty(readable, WITHHELD, { value: access.unreadable })
  return readable as T
}

/** The fields `readableResult` withheld from a page. */
export function withheldFields(page: unknown): readonly string[] {
  return (page as { [WITHHELD]?: readonly string[] } | undefined)?.[WITHHELD] ?? []
}

/** A selection without the fields the caller may not read: all it may read when it selected nothing. */
export function readableSelection(
  select: readonly string[] | undefined,
  access: FieldAccess | undefined
): string[] | undefined {
  if (!access || access.unreadable.length === 0 || select) return select && [...select]
  return access.resource.fields.filter((field) => access.allows(field, 'read')).map((field) => field.name)
}
