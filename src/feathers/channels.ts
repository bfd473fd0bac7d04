import { getServiceOptions, type HookContext, type NullableId } from '@feathersjs/feathers'
import type { Channel } from '@feathersjs/transport-commons'
import type { ResolvedResource } from '../resource/resolve'
import { strictFilter } from '../query/filters'
import { matchesFilter } from '../query/match-filter'
import type { ResourceRecord } from '../model/records'
import { callContext } from '../authorization/call-scope'
import { writtenRecords } from '../service/written-records'

type Channels = Channel | Channel[] | void
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Publisher = (data: any, context: HookContext) => Channels | Promise<Channels>

/**
 * The record as the write left it, hidden fields included: what `authorize` rules may refer to, also when
 * the caller narrowed the write's answer with `$select`.
 */
export function fullRecord(resource: ResolvedResource, data: ResourceRecord, context: HookContext): ResourceRecord {
  const id = resource.idField.name
  return writtenRecords(context).find((record) => record && String(record[id]) === String(data?.[id])) ?? data
}

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

/**
 * Wraps an application's publisher (`app.publish(authorizedPublisher(() => app.channel('authenticated')))`)
 * so that an event of a plugin resource reaches a connection of the channels it returns only if the resource's
 * `authorize` admits the record for that connection, as if the connection had read it with `get`. A rule
 * that throws (no user, a suspended one) admits nothing. Events of other services pass unchanged.
 * Guards are not run per event: publish to channels of authenticated connections for that.
 */
export function authorizedPublisher(publisher: Publisher): Publisher {
  // Feathers sends an event when its publisher's promise settles. Each event's decision waits for the one
  // before it, so a slow `authorize` (a lookup of its own) never lets a later event of the record overtake an
  // earlier one: a client hearing `removed` before `patched` would bring the record back.
  let previous: Promise<unknown> = Promise.resolve()
  return (data, context) => {
    const decided = previous.then(() => admittedChannels(publisher, data, context))
    previous = decided.catch(() => undefined)
    return decided
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function admittedChannels(publisher: Publisher, data: any, context: HookContext): Promise<Channels> {
  const channels = await publisher(data, context)
  const resource = getServiceOptions(context.service)?.resource as ResolvedResource | undefined
  if (!channels || !resource?.definition.authorize) return channels
  const list = (Array.isArray(channels) ? channels.flat(Infinity) : [channels]).filter(Boolean) as Channel[]
  const record = fullRecord(resource, data, context)
  const admitted = new Set<unknown>()
  const decided = new Set<unknown>()
  for (const channel of list) {
    for (const connection of channel.connections) {
      if (decided.has(connection)) continue
      decided.add(connection)
      const params = { provider: 'socketio', ...connection }
      if (await admitsRecord(resource, context.service, params, record)) admitted.add(connection)
    }
  }
  return list.map((channel) => channel.filter((connection) => admitted.has(connection)))
}
