import type { RecordedReads } from './read-recorder'
import type { LiveSubscriber } from './live-subscriber'

/**
 * The subscribers of one live question under one scope: they see the same result, computed once for all of
 * them (with the first subscriber's own call, which reads exactly what each of theirs would) and delivered
 * only when it differs from the last one delivered.
 */
export class LiveGroup<R = unknown> {
  readonly subscribers = new Set<LiveSubscriber<R>>()
  /** The result last delivered, as compared text. */
  lastText: string
  /** What the last computation read: its resources are the ones whose writes may change the result. */
  reads: RecordedReads
  /** A write may have changed the result since it was last computed. */
  stale = false
  computing = false
  timer: NodeJS.Timeout | undefined
  closed = false

  constructor(
    public key: string,
    first: LiveSubscriber<R>,
    text: string,
    reads: RecordedReads
  ) {
    this.subscribers.add(first)
    this.lastText = text
    this.reads = reads
  }

  /** The subscriber whose call computes the group's results. */
  get representative(): LiveSubscriber<R> | undefined {
    return this.subscribers.values().next().value
  }

  /** Delivers `result` to every subscriber but `except`, when it differs from the last one delivered. */
  deliver(result: R, text: string, except?: LiveSubscriber<R>) {
    if (text === this.lastText) return false
    this.lastText = text
    for (const subscriber of this.subscribers) if (subscriber !== except) subscriber.deliver(result)
    return true
  }
}
