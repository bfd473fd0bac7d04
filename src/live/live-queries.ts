import { createHash } from 'node:crypto'
import type { HookContext } from '@feathersjs/feathers'
import { TooManyRequests } from '@feathersjs/errors'
import { ConcurrencyLimit } from '../graphql/fields/concurrency'
import { WRITE_EVENTS } from '../feathers/external-records'
import { fullRecord } from '../service/written-records'
import type { ResourceRecord } from '../model/records'
import type { ResolvedResource } from '../resource/resolved'
import { LiveGroup } from './live-group'
import type { ResolvedLiveOptions } from './live-options'
import type { LiveSubscriber } from './live-subscriber'
import { withReadsRecorded, type RecordedReads } from './read-recorder'
import type { StatementTables } from './statement-tables'
import { certainlyOutside, filterFields, patchKeepsFields } from './write-relevance'

interface EventSource {
  on(event: string, listener: (data: ResourceRecord, context: HookContext) => void): unknown
  off(event: string, listener: (data: ResourceRecord, context: HookContext) => void): unknown
}

/** What `watch` answers: the subscriber's first result, and how to stop watching. */
export interface LiveWatch<R> {
  first: R
  stop(): void
}

let unshared = 0

/**
 * The live questions of one process. Each subscriber's first result is its own call's; subscribers whose
 * question and scope are equal and whose calls read the same statements with the same values join one group,
 * computed again once per burst of writes (`coalesceMs`) to the resources it read, and delivered only when it
 * changed. Writes come as the services' Feathers events, so writes of every transport and (feathers-sync)
 * every instance count; a created or removed record outside the filter of a question that reads one resource
 * costs nothing.
 */
export class LiveQueries {
  private readonly groups = new Map<string, LiveGroup>()
  private readonly groupOf = new Map<LiveSubscriber, LiveGroup>()
  /** The groups that read each resource (by base path), and the listeners on its service while any does. */
  private readonly readers = new Map<string, { groups: Set<LiveGroup>; stop: () => void }>()
  private readonly computations: ConcurrencyLimit
  /** Counted for the bench and the tests' statement counts: computations run, writes found irrelevant. */
  readonly counts = { computations: 0, skippedWrites: 0 }

  constructor(
    private readonly options: ResolvedLiveOptions,
    private readonly serviceAt: (path: string) => EventSource | undefined,
    /** The statements' tables, as the services of the resources that write them. */
    private readonly writers: StatementTables,
    /** Whether a resource's database compares text by code points, as JavaScript does (not MySQL's). */
    private readonly binaryText: (resource: ResolvedResource) => boolean
  ) {
    this.computations = new ConcurrencyLimit(options.maxConcurrentComputations)
  }

  get questions() {
    return this.groups.size
  }

  async watch<R>(subscriber: LiveSubscriber<R>): Promise<LiveWatch<R>> {
    const { value: first, reads } = await this.computations.run(() => withReadsRecorded(subscriber.compute))
    this.join(subscriber as LiveSubscriber, first, reads)
    return { first, stop: () => this.unwatch(subscriber as LiveSubscriber) }
  }

  /** Puts a subscriber whose own call answered `value`, reading `reads`, in the group of what it read. */
  private join(subscriber: LiveSubscriber, value: unknown, reads: RecordedReads) {
    const key = this.keyOf(subscriber, reads)
    const text = subscriber.text(value)
    let group = this.groups.get(key)
    if (group) {
      group.subscribers.add(subscriber)
      // The group's last result is older than this one: its other subscribers catch up.
      group.deliver(value, text, subscriber)
    } else {
      if (this.groups.size >= this.options.maxQuestions) {
        throw new TooManyRequests(
          `This server answers at most ${this.options.maxQuestions} distinct live queries at once; try later`,
          { code: 'TOO_MANY_LIVE_QUERIES', maxQuestions: this.options.maxQuestions }
        )
      }
      group = new LiveGroup(key, subscriber, text, reads)
      this.groups.set(key, group)
      this.retain(group, this.writers.of(reads))
    }
    this.groupOf.set(subscriber, group)
  }

  private keyOf(subscriber: LiveSubscriber, reads: RecordedReads) {
    if (reads.incomparable) return `unshared ${++unshared}`
    const hash = createHash('sha256').update(subscriber.question).update('\0').update(subscriber.scope)
    for (const statement of [...reads.statements].sort()) hash.update('\0').update(statement)
    return hash.digest('base64url')
  }

  private unwatch(subscriber: LiveSubscriber) {
    const group = this.groupOf.get(subscriber)
    if (!group) return
    this.groupOf.delete(subscriber)
    group.subscribers.delete(subscriber)
    if (group.subscribers.size === 0) this.close(group)
  }

  private close(group: LiveGroup) {
    group.closed = true
    clearTimeout(group.timer)
    if (this.groups.get(group.key) === group) this.groups.delete(group.key)
    this.release(group, this.writers.of(group.reads))
  }

  /** Listens to the services of `resources` for `group`. */
  private retain(group: LiveGroup, resources: Iterable<string>) {
    for (const path of resources) {
      let readers = this.readers.get(path)
      if (!readers) {
        const service = this.serviceAt(path)
        if (!service) continue
        const groups = new Set<LiveGroup>()
        const listeners = Object.values(WRITE_EVENTS).map((event) => {
          const listener = (data: ResourceRecord, context: HookContext) =>
            this.written(groups, event, data, context)
          service.on(event, listener)
          return () => service.off(event, listener)
        })
        readers = { groups, stop: () => listeners.forEach((off) => off()) }
        this.readers.set(path, readers)
      }
      readers.groups.add(group)
    }
  }

  private release(group: LiveGroup, resources: Iterable<string>) {
    for (const path of resources) {
      const readers = this.readers.get(path)
      if (!readers) continue
      readers.groups.delete(group)
      if (readers.groups.size > 0) continue
      readers.stop()
      this.readers.delete(path)
    }
  }

  private written(groups: Set<LiveGroup>, event: string, data: ResourceRecord, context: HookContext) {
    for (const group of groups) {
      if (group.stale || !this.mayChange(group, event, data, context)) {
        if (!group.stale) this.counts.skippedWrites++
        continue
      }
      this.invalidate(group)
    }
  }

  /**
   * Whether a write may change the group's result. Decided only for a record of the question's own resource
   * that the question does not also read as a relation: a created or removed record certainly outside the
   * client's filter (within the caller's read scope) is in no result, nor is a patched one whose patch left
   * every field of the filter as it was. Anything else may.
   */
  private mayChange(group: LiveGroup, event: string, data: ResourceRecord, context: HookContext) {
    const root = group.representative?.root
    if (!root?.filter || context.path !== root.resource.basePath) return true
    if (group.reads.related.has(root.resource.basePath)) return true
    const { resource, filter } = root
    if (event === WRITE_EVENTS.patch) {
      if (!patchKeepsFields(resource, context, filterFields(filter))) return true
    } else if (event !== WRITE_EVENTS.create && event !== WRITE_EVENTS.remove) {
      return true
    }
    const record = fullRecord(resource, data, context)
    return !certainlyOutside(resource, record, filter, this.binaryText(resource))
  }

  private invalidate(group: LiveGroup) {
    group.stale = true
    if (group.timer || group.computing || group.closed) return
    group.timer = setTimeout(() => void this.recompute(group), this.options.coalesceMs)
  }

  private async recompute(group: LiveGroup) {
    group.timer = undefined
    group.stale = false
    group.computing = true
    try {
      await this.computations.run(() => this.computeOnce(group))
    } finally {
      group.computing = false
      if (group.stale && !group.closed) {
        group.stale = false
        this.invalidate(group)
      }
    }
  }

  /** Computes the group's result with its representative's call; one whose call fails leaves the group. */
  private async computeOnce(group: LiveGroup) {
    for (
      let subscriber = group.representative;
      subscriber && !group.closed;
      subscriber = group.representative
    ) {
      let computed: { value: unknown; reads: RecordedReads }
      try {
        this.counts.computations++
        computed = await withReadsRecorded(subscriber.compute)
      } catch (error) {
        this.unwatch(subscriber)
        subscriber.fail(error)
        continue
      }
      if (group.closed) return
      if (subscriber.refuses?.(computed.value)) {
        this.unwatch(subscriber)
        subscriber.fail(computed.value)
        continue
      }
      if ([...computed.reads.resources].some((path) => !group.reads.resources.has(path))) {
        await this.separate(group, subscriber, computed.reads)
        if (group.closed) return
      }
      group.deliver(computed.value, subscriber.text(computed.value))
      this.reread(group, computed.reads, subscriber)
      return
    }
  }

  /**
   * When a computation reads a resource the group had not read (the first comment of a task, say), what its
   * other subscribers would read of it is unknown: their scopes of it agreed when they joined, but a hook of
   * theirs may narrow it otherwise. Each computes its own result once; one that read otherwise leaves for
   * the group of what it read, with its own result, so that it never gets the representative's.
   */
  private async separate(group: LiveGroup, representative: LiveSubscriber, reads: RecordedReads) {
    const key = this.keyOf(representative, reads)
    // What the group read is no longer its key (`reread` gives it the new one): a subscriber leaving must
    // never join it again under the old.
    if (this.groups.get(group.key) === group) this.groups.delete(group.key)
    for (const other of [...group.subscribers]) {
      if (other === representative || group.closed) continue
      let own: { value: unknown; reads: RecordedReads }
      try {
        this.counts.computations++
        own = await withReadsRecorded(other.compute)
      } catch (error) {
        this.unwatch(other)
        other.fail(error)
        continue
      }
      if (this.groupOf.get(other) !== group) continue
      if (other.refuses?.(own.value)) {
        this.unwatch(other)
        other.fail(own.value)
        continue
      }
      if (this.keyOf(other, own.reads) === key) continue
      const delivered = group.lastText
      group.subscribers.delete(other)
      this.groupOf.delete(other)
      try {
        this.join(other, own.value, own.reads)
      } catch (error) {
        other.fail(error)
        continue
      }
      if (other.text(own.value) !== delivered) other.deliver(own.value)
    }
    if (group.subscribers.size === 0 && !group.closed) this.close(group)
  }

  /**
   * The group's key and resources after a computation: new records bring new statements (their relations),
   * which a subscriber arriving now reads too. A group whose new key another holds merges into it.
   */
  private reread(group: LiveGroup, reads: RecordedReads, representative: LiveSubscriber) {
    const key = this.keyOf(representative, reads)
    const before = group.reads.resources
    this.retain(
      group,
      [...reads.resources].filter((path) => !before.has(path))
    )
    this.release(
      group,
      [...before].filter((path) => !reads.resources.has(path))
    )
    group.reads = reads
    if (key === group.key && this.groups.get(key) === group) return
    if (this.groups.get(group.key) === group) this.groups.delete(group.key)
    group.key = key
    const other = this.groups.get(key)
    if (!other) {
      this.groups.set(key, group)
      return
    }
    // Same question, scope and reads: the same result. Its subscribers join the other group.
    for (const subscriber of group.subscribers) {
      other.subscribers.add(subscriber)
      this.groupOf.set(subscriber, other)
    }
    group.subscribers.clear()
    this.close(group)
  }
}
