import type { HookContext } from '@feathersjs/feathers'
import { admitsRecord } from '../../authorization/record-admission'
import { breathEvery } from '../../common/breather'
import { WRITE_EVENTS } from '../../feathers/external-records'
import { matchesFilter } from '../../query/match-filter'
import { callerAccess, type FieldAccess } from '../../authorization/field-rules'
import { fullRecord, writtenRecords } from '../../service/written-records'
import type { Filter } from '../../model/query'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceParams, ResourceRecord } from '../../model/records'
import type { SubscriptionKind } from '../fields/context'
import { instruments } from '../../telemetry/telemetry'

export interface Subscriber {
  kind: SubscriptionKind
  /** The subscriber's own filter (`input.filter`), matched against each record. */
  filter?: Filter
  /** The params of the subscriber's connection (user, authentication), for `authorize`. */
  params: ResourceParams
  deliver(payload: unknown): void
}

interface EventSource {
  on(event: string, listener: (data: ResourceRecord, context: HookContext) => void): unknown
  off(event: string, listener: (data: ResourceRecord, context: HookContext) => void): unknown
}

/** What a write event reports: one record, or (for a multi patch or remove) several in one call. */
function kindOf(event: string, context: HookContext): SubscriptionKind | undefined {
  if (event === WRITE_EVENTS.create) return 'created'
  // An upsert's events are each of one record, though the call names no id.
  const many = context.method !== 'upsert' && (context.id === null || context.id === undefined)
  if (event === WRITE_EVENTS.update || event === WRITE_EVENTS.patch)
    return many ? 'updatedMany' : 'updatedOne'
  if (event === WRITE_EVENTS.remove) return many ? 'deletedMany' : 'deletedOne'
  return undefined
}

/**
 * The subscribers of one resource, fed by its service's Feathers events, so that writes from REST, GraphQL,
 * socket.io and internal calls all notify. Listeners are on the service only while someone subscribes.
 * Each record reaches a subscriber only if the resource's `authorize` admits it for the subscriber's
 * connection (as if read with `get`), decided first, and it matches the subscriber's filter (a matcher
 * linear in the text, whatever the pattern); the event loop breathes between decisions. Events carry records without
 * hidden and filterOnly fields. A multi patch or remove reports once, with the count of records the
 * subscriber may see.
 */
export class ResourceEvents {
  private readonly subscribers = new Set<Subscriber>()
  private readonly listeners = new Map<string, (data: ResourceRecord, context: HookContext) => void>()
  /** Multi writes already reported: their events arrive once per record, with one context. */
  private readonly counted = new WeakSet<HookContext>()
  private readonly access = new WeakMap<ResourceParams, Promise<FieldAccess | undefined>>()
  /** Deliveries in event order, though deciding them is asynchronous. */
  private delivering: Promise<void> = Promise.resolve()

  constructor(
    private readonly resource: ResolvedResource,
    private readonly service: EventSource
  ) {}

  get size() {
    return this.subscribers.size
  }

  /** Adds a subscriber; the function returned removes it. */
  add(subscriber: Subscriber): () => void {
    if (this.subscribers.size === 0) this.listen()
    this.subscribers.add(subscriber)
    const attributes = { 'feathers.service.path': this.resource.basePath }
    instruments().subscriptionsOpen.add(1, attributes)
    return () => {
      if (!this.subscribers.delete(subscriber)) return
      instruments().subscriptionsOpen.add(-1, attributes)
      if (this.subscribers.size === 0) this.stopListening()
    }
  }

  private listen() {
    for (const event of Object.values(WRITE_EVENTS)) {
      const listener = (data: ResourceRecord, context: HookContext) => {
        const kind = kindOf(event, context)
        if (!kind) return
        // A failed delivery (none is expected: refusals are decided, not thrown) must not stop the next ones.
        this.delivering = this.delivering
          .then(() => this.dispatch(kind, data, context))
          .catch(() => undefined)
      }
      this.listeners.set(event, listener)
      this.service.on(event, listener)
    }
  }

  private stopListening() {
    for (const [event, listener] of this.listeners) this.service.off(event, listener)
    this.listeners.clear()
  }

  private async dispatch(kind: SubscriptionKind, data: ResourceRecord, context: HookContext) {
    const subscribers = [...this.subscribers].filter((subscriber) => subscriber.kind === kind)
    if (subscribers.length === 0) return
    if (kind === 'updatedMany' || kind === 'deletedMany')
      return this.dispatchCount(kind, subscribers, context)
    const record = fullRecord(this.resource, data, context)
    const breathe = breathEvery()
    // One decision per connection, however many of its subscriptions listen.
    const admitted = new Map<ResourceParams, Promise<boolean>>()
    for (const subscriber of subscribers) {
      await breathe()
      let admits = admitted.get(subscriber.params)
      if (!admits) admitted.set(subscriber.params, (admits = this.admits(subscriber, record)))
      // `authorize` first: a subscriber's own filter never runs on a record it may not see.
      if (!(await admits)) continue
      if (subscriber.filter && !matchesFilter(this.resource, record, subscriber.filter, true)) continue
      const access = await this.accessOf(subscriber)
      subscriber.deliver(access ? access.strip(data) : data)
    }
  }

  private async dispatchCount(kind: SubscriptionKind, subscribers: Subscriber[], context: HookContext) {
    if (this.counted.has(context)) return
    this.counted.add(context)
    const records = writtenRecords(context)
    const breathe = breathEvery()
    for (const subscriber of subscribers) {
      let count = 0
      for (const record of records) {
        await breathe()
        if (await this.admits(subscriber, record)) count++
      }
      if (count === 0) continue
      subscriber.deliver(kind === 'updatedMany' ? { updatedCount: count } : { deletedCount: count })
    }
  }

  /** What the subscriber's field rules let it read, decided once per connection. */
  private accessOf(subscriber: Subscriber): Promise<FieldAccess | undefined> | undefined {
    if (!this.resource.definition.fieldRules) return undefined
    let access = this.access.get(subscriber.params)
    if (!access) {
      const params = { provider: 'graphql', ...subscriber.params }
      access = Promise.resolve(callerAccess(this.resource, params)).then((caller) =>
        caller?.of(this.resource)
      )
      this.access.set(subscriber.params, access)
    }
    return access
  }

  private admits(subscriber: Subscriber, record: ResourceRecord) {
    return admitsRecord(this.resource, this.service, subscriber.params as Record<string, unknown>, record)
  }
}
