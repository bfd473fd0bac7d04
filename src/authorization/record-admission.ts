import type { NullableId } from '@feathersjs/feathers'
import type { ResourceRecord } from '../model/records'
import { strictFilter } from '../query/filters'
import { matchesFilter } from '../query/match-filter'
import type { ResolvedResource } from '../resource/resolved'
import { callContext } from './call-scope'

/**
 * Whether the resource's `authorize` admits `record` for a caller with `params`, as if the caller read it
 * with `get`. A rule that throws (no user, a suspended one) admits nothing.
 */
export async function admitsRecord(
  resource: ResolvedResource,
  service: unknown,
  params: Record<string, unknown>,
  record: ResourceRecord
): Promise<boolean> {
  const { authorize } = resource.definition
  if (!authorize) return true
  const id = record[resource.idField.name] as NullableId
  try {
    const rule = await authorize(callContext(service, { method: 'get', id, params }))
    // A field the record lacks (a resolver dropped it) admits nothing rather than reading as null.
    return !rule || matchesFilter(resource, record, strictFilter(rule, resource).filter, true)
  } catch {
    // Not admitted: the rule refused this caller.
    return false
  }
}
