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
