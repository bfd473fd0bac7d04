import type { HookContext } from '@feathersjs/feathers'
import type { Filter } from '../model/query'
import type { ResourceRecord } from '../model/records'
import type { ResolvedResource } from '../resource/resolved'
import { matchesFilter } from '../query/match-filter'

/**
 * The comparisons of text that JavaScript decides as a database with a binary collation does (PostgreSQL's
 * and SQLite's defaults). Order (`gt`, `between`) follows the column's collation, and case folding (`iLike`)
 * the database's own rules.
 */
const EXACT_TEXT_COMPARISONS = new Set(['is', 'isNot', 'eq', 'neq', 'in', 'notIn', 'like', 'notLike'])

/**
 * Whether the record alone answers a comparison of one field: one it carries, and text only where JavaScript
 * compares it as the database does. MySQL's and MariaDB's default collations ignore case, accents and
 * trailing spaces: there, no comparison of text is decided.
 */
function decidable(
  resource: ResolvedResource,
  record: ResourceRecord,
  key: string,
  value: object,
  binaryText: boolean
) {
  const field = resource.fieldMap.get(key)
  if (!field || !(key in record)) return false
  if (field.kind !== 'string') return true
  return binaryText && Object.keys(value).every((name) => EXACT_TEXT_COMPARISONS.has(name))
}

/**
 * Whether a created or removed record is certainly outside `filter`, so that no result read within it can hold
 * it: one comparison of those the filter joins with `and` that the record answers, and fails; every branch of
 * an `or` outside. A relation filter needs other records and a comparison the record cannot answer counts as
 * met: a live result is computed again rather than missed. `binaryText`: the database compares text by its
 * code points (PostgreSQL's and SQLite's defaults, not MySQL's case-insensitive collations).
 */
export function certainlyOutside(
  resource: ResolvedResource,
  record: ResourceRecord,
  filter: Filter,
  binaryText: boolean
): boolean {
  return Object.entries(filter).some(([key, value]) => {
    if (value === undefined) return false
    if (key === 'and')
      return (value as Filter[]).some((sub) => certainlyOutside(resource, record, sub, binaryText))
    if (key === 'or')
      return (value as Filter[]).every((sub) => certainlyOutside(resource, record, sub, binaryText))
    return (
      decidable(resource, record, key, value as object, binaryText) &&
      !matchesFilter(resource, record, { [key]: value } as Filter, true)
    )
  })
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
