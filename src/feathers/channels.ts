import { getServiceOptions, type HookContext, type NullableId } from '@feathersjs/feathers'
import type { Channel } from '@feathersjs/transport-commons'
import type { ResolvedResource } from '../resource/resolve'
import { strictFilter } from '../query/filters'
import { matchesFilter } from '../query/match-filter'
import type { ResourceRecord } from '../service/resource-service'
import { callContext } from '../service/scope'

type Channels = Channel | Channel[] | void
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Publisher = (data: any, context: HookContext) => Channels | Promise<Channels>

/** The record as the write left it, hidden fields included: what `authorize` rules may refer to. */
function fullRecord(resource: ResolvedResource, data: ResourceRecord, context: HookContext): ResourceRecord {
  const id = resource.idField.name
  const results = (Array.isArray(context.result) ? context.result : [context.result]) as ResourceRecord[]
  return results.find((record) => record && String(record[id]) === String(data?.[id])) ?? data
}

/**
 * Wraps an application's publisher (`app.publish(authorizedPublisher(() => app.channel('authenticated')))`)
 * so that an event of a plugin resource reaches a connection of the channels it returns only if the resource's
 * `authorize` admits the record for that connection, as if the connection had read it with `get`. A rule
 * that throws (no user, a suspended one) admits nothing. Events of other services pass unchanged.
 * Guards are not run per event: publish to channels of authenticated connections for that.
 */
export function authorizedPublisher(publisher: Publisher): Publisher {
  return async (data, context) => {
    const channels = await publisher(data, context)
    const resource = getServiceOptions(context.service)?.resource as ResolvedResource | undefined
    const authorize = resource?.definition.authorize
    if (!channels || !resource || !authorize) return channels
    const list = (Array.isArray(channels) ? channels.flat(Infinity) : [channels]).filter(Boolean) as Channel[]
    const record = fullRecord(resource, data, context)
    const admitted = new Set<unknown>()
    const decided = new Set<unknown>()
    for (const channel of list) {
      for (const connection of channel.connections) {
        if (decided.has(connection)) continue
        decided.add(connection)
        const params = { provider: 'socketio', ...connection }
        const id = record[resource.idField.name]
        const readContext = callContext(context.service, { method: 'get', id: id as NullableId, params })
        try {
          const rule = await authorize(readContext)
          if (!rule || matchesFilter(resource, record, strictFilter(rule, resource.idField.name).filter)) {
            admitted.add(connection)
          }
        } catch {
          // Not admitted: the rule refused this connection.
        }
      }
    }
    return list.map((channel) => channel.filter((connection) => admitted.has(connection)))
  }
}
