import { badInput, type FieldError } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import { relationFilterKey } from '../resource/relation-quantifiers'
import type { Filter, ResourceQuery, SortField } from '../model/query'
import type { CallerAccess, FieldUse } from './field-rules'

/**
 * Checks what a call's query does with fields against the caller's field rules: every field a filter
 * compares (through relation filters too), every sort key (through relations, and relation aggregates),
 * every selected field, and the sort keys a keyset cursor would carry. Each refused use is named in one 400,
 * so that no forbidden field can be used to learn its values by difference.
 */
export class FieldUseCheck {
  readonly errors: FieldError[] = []

  constructor(
    private readonly access: CallerAccess,
    private readonly resource: ResolvedResource
  ) {}

  /** Throws the 400 naming every refused use. */
  done() {
    if (this.errors.length > 0) throw badInput(this.errors, 'This caller may not use some of these fields')
  }

  use(resource: ResolvedResource, name: string, use: FieldUse, path: string) {
    const access = this.access.of(resource)
    if (access && !access.allows(name, use))
      this.errors.push({ field: path, message: access.refusal(name, use) })
  }

  aggregate(resource: ResolvedResource, name: string, fn: string, path: string) {
    const access = this.access.of(resource)
    if (!access || access.allowsAggregate(name, fn)) return
    const use = access.allows(name, 'aggregate') ? 'read' : 'aggregate'
    this.errors.push({ field: path, message: access.refusal(name, use) })
  }

  query(query: ResourceQuery | undefined, paths: { filter: string; sorting: string; select: string }) {
    if (!query) return this
    this.filter(this.resource, query.filter, paths.filter)
    query.sorting?.forEach((sort, index) => this.sort(sort, `${paths.sorting}.${index}`, !!query.keyset))
    // Without a sort of its own, a keyset page goes by the resource's: its cursors carry those values too.
    if (query.keyset && !query.sorting?.length) {
      for (const sort of this.resource.query.defaultSort) this.cursorValue(sort.field, paths.sorting)
    }
    this.select(query.select, paths.select)
    this.select(query.answerFields, paths.select)
    return this
  }

  select(select: readonly unknown[] | undefined, path: string) {
    if (!Array.isArray(select)) return
    select.forEach((name) => typeof name === 'string' && this.use(this.resource, name, 'read', path))
  }

  filter(resource: ResolvedResource, filter: Filter | undefined, path: string) {
    if (!filter || typeof filter !== 'object') return
    for (const [key, value] of Object.entries(filter)) {
      const at = path ? `${path}.${key}` : key
      if ((key === 'and' || key === 'or') && Array.isArray(value)) {
        value.forEach((member, index) => this.filter(resource, member as Filter, `${at}.${index}`))
      } else if (resource.fieldMap.has(key)) {
        this.use(resource, key, 'filter', at)
      } else {
        const related = relationFilterKey(resource, key)
        if (related) this.filter(related.relation.target, value as Filter, at)
      }
    }
  }

  /**
   * A sort key: an own field, a dotted path through relations to a field, or a relation aggregate. A keyset
   * cursor carries the values of its sort keys, so those must be readable.
   */
  sort(sort: SortField, path: string, keyset: boolean) {
    if (!sort || typeof sort.field !== 'string') return
    const found = walk(this.resource, sort.field)
    if (!found) return
    const at = `${path}.field`
    if (sort.aggregate !== undefined) {
      if (found.name !== undefined) this.aggregate(found.resource, found.name, sort.aggregate, at)
      return
    }
    if (found.name === undefined) return
    this.use(found.resource, found.name, 'sort', at)
    if (keyset) this.cursorValue(sort.field, at)
  }

  /** A keyset cursor hands the client the values of its sort keys: the caller must be able to read them. */
  private cursorValue(dotted: string, path: string) {
    const found = walk(this.resource, dotted)
    if (found?.name !== undefined) this.use(found.resource, found.name, 'read', path)
  }
}

/**
 * The resource and field a dotted name ends at (`owner.name`, `subTasks.points`), walking any relation; a
 * relation alone (`subTasks` with `count`) has no field. Names that lead nowhere are the other checks' to
 * refuse.
 */
export function walk(
  resource: ResolvedResource,
  dotted: string
): { resource: ResolvedResource; name?: string } | undefined {
  const members = dotted.split('.')
  let current = resource
  for (const [index, member] of members.entries()) {
    if (current.fieldMap.has(member))
      return index === members.length - 1 ? { resource: current, name: member } : undefined
    const relation = current.relationMap.get(member)
    if (!relation) return undefined
    current = relation.target
  }
  return { resource: current }
}

/** The checks of one call, or none when no field rule applies to it. */
export function fieldUseCheck(access: CallerAccess | undefined, resource: ResolvedResource) {
  return access ? new FieldUseCheck(access, resource) : undefined
}
