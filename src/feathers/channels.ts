import { getServiceOptions, type HookContext } from '@feathersjs/feathers'
import type { Channel } from '@feathersjs/transport-commons'
import type { ResolvedResource } from '../resource/resolved'
import { admitsRecord } from '../authorization/record-admission'
import { fullRecord } from '../service/written-records'
import { breathEvery } from '../common/breather'
import { callerAccess, type FieldAccess } from '../authorization/field-rules'
import type { ResourceRecord } from '../model/records'

type Channels = Channel | Channel[] | void
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Publisher = (data: any, context: HookContext) => Channels | Promise<Channels>

const AUTHORIZED = Symbol('feathers-query.authorizedPublisher')

/** Whether `publisher` came from `authorizedPublisher` (and so needs no second check). */
function isAuthorizedPublisher(publisher: Publisher) {
  return (publisher as { [AUTHORIZED]?: boolean })[AUTHORIZED] === true
}

/**
 * Wraps an application's publisher (`app.publish(authorizedPublisher(() => app.channel('authenticated')))`)
 * so that an event of a plugin resource reaches a connection of the channels it returns only if the resource's
 * `authorize` admits the record for that connection, as if the connection had read it with `get`. A rule
 * that throws (no user, a suspended one) admits nothing. Events of other services pass unchanged.
 * Guards are not run per event: publish to channels of authenticated connections for that. Every resource
 * service applies it to whichever publisher Feathers picks for its events (`privateEvents`); calling it
 * yourself is needed only for a publisher that other code calls directly.
 */
export function authorizedPublisher(publisher: Publisher): Publisher {
  if (isAuthorizedPublisher(publisher)) return publisher
  // Feathers sends an event when its publisher's promise settles. Each event's decision waits for the one
  // before it, so a slow `authorize` (a lookup of its own) never lets a later event of the record overtake an
  // earlier one: a client hearing `removed` before `patched` would bring the record back.
  let previous: Promise<unknown> = Promise.resolve()
  const authorized: Publisher = (data, context) => {
    const decided = previous.then(() => admittedChannels(publisher, data, context))
    previous = decided.catch(() => undefined)
    return decided
  }
  return Object.assign(authorized, { [AUTHORIZED]: true })
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function admittedChannels(publisher: Publisher, data: any, context: HookContext): Promise<Channels> {
  const channels = await publisher(data, context)
  if (!channels) return channels
  const list = (Array.isArray(channels) ? channels.flat(Infinity) : [channels]).filter(Boolean) as Channel[]
  const breathe = breathEvery()
  const resource = getServiceOptions(context.service)?.resource as ResolvedResource | undefined
  if (!resource?.definition.authorize && !resource?.definition.fieldRules) {
    // Feathers sends an event to all its connections at once; breaths in proportion to them let other
    // requests in between the events of a write that goes to many connections.
    for (const channel of list) for (let n = 0; n < channel.length; n++) await breathe()
    return channels
  }
  const record = resource.definition.authorize ? fullRecord(resource, data, context) : undefined
  /** Each admitted connection's field access (null: it may read every field the event carries). */
  const admitted = new Map<unknown, FieldAccess | null>()
  const decided = new Set<unknown>()
  for (const channel of list) {
    for (const connection of channel.connections) {
      if (decided.has(connection)) continue
      decided.add(connection)
      await breathe()
      const params = { provider: 'socketio', ...connection }
      if (record && !(await admitsRecord(resource, context.service, params, record))) continue
      admitted.set(connection, (await callerAccess(resource, params))?.of(resource) ?? null)
    }
  }
  if (!resource.definition.fieldRules) return list.map((channel) => channel.filter((c) => admitted.has(c)))
  return list.flatMap((channel) => readableParts(channel, data, admitted))
}

/**
 * A channel split by what its connections may read: each part sends the event's record (or the channel's
 * own data) without the fields its connections' rules withhold. Without data of its own, a channel sends
 * the writer's answer, which is what the writer may read, not what each connection may.
 */
function readableParts(channel: Channel, data: unknown, admitted: Map<unknown, FieldAccess | null>) {
  const sent = (channel.data ?? data) as ResourceRecord
  const parts = new Map<string, Channel>()
  for (const connection of channel.connections) {
    const access = admitted.get(connection)
    if (access === undefined) continue
    const key = access?.key ?? ''
    if (parts.has(key)) continue
    const readable = access ? access.strip(sent) : sent
    const members = channel.filter((other) => (admitted.get(other)?.key ?? '') === key && admitted.has(other))
    parts.set(key, members.send(readable))
  }
  return [...parts.values()]
}
