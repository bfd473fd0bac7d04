import type { HookContext } from '@feathersjs/feathers'
import type { Filter } from '../model/query'
import type { ResourceRecord } from '../model/records'
import type { ResolvedResource } from '../resource/resolved'
import { matchesFilter } from '../query/match-filter'

/**
 * Whether the record alone answers the filter: only fields it carries, joined by `and` and `or` (a relation
 * filter needs other records, which the record does not hold).
 */
function decidable(resource: ResolvedResource, record: ResourceRecord, filter: Filter): boolean {
  return Object.entries(filter).every(([key, value]) => {
    if (value === undefined) return true
    if (key === 'and' || key === 'or') {
      return (value as Filter[]).every((sub) => decidable(resource, record, sub))
    }
    return resource.fieldMap.has(key) && key in record
  })
}

/**
 * Whether a created or removed record is certainly outside `filter`, so that no result read within it can hold
 * it. Anything the record cannot decide counts as inside: a live result is computed again rather than missed.
 */
export function certainlyOutside(
  resource: ResolvedResource,
  record: ResourceRecord,
  filter: Filter
): boolean {
  return decidable(resource, record, filter) && !matchesFilter(resource, record, filter, true)
}

/** The fields a filter compares (relation filters by their relation's name). */
export function filterFields(filter: Filter, fields = new Set<string>()): Set<string> {
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined) continue
    if (key === 'and' || key === 'or') for (const sub of value as Filter[]) filterFields(sub, fields)
    else fields.add(key)
  }
  return fields
}

/**
 * Whether a field's value may change without a write's data naming it: the version the plugin counts up, and
 * a field the database computes from the row.
 */
function changesUnnamed(resource: ResolvedResource, name: string): boolean {
  const field = resource.fieldMap.get(name)
  return !!field && (!!field.expression || !!field.computed || resource.version?.field === field)
}

/**
 * Whether a patch left every one of `fields` as it was: its data, as its hooks left it, names none of them,
 * and none is one the write changes unnamed. A record the filter left out before such a patch is still out
 * after it, and the other way round.
 */
export function patchKeepsFields(
  resource: ResolvedResource,
  context: HookContext,
  fields: Set<string>
): boolean {
  const data = context.data as Record<string, unknown> | undefined
  if (context.method !== 'patch' || !data || typeof data !== 'object' || Array.isArray(data)) return false
  if ([...fields].some((name) => changesUnnamed(resource, name))) return false
  return Object.keys(data).every((name) => !fields.has(name))
}
