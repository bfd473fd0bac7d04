import type { Filter } from '../model/query'
import type { ResolvedResource } from '../resource/resolved'

/** One client's live question, as the transport that serves it (GraphQL, Feathers) puts it. */
export interface LiveSubscriber<R = unknown> {
  /** The question itself (the operation and its variables, or the method and its query). */
  question: string
  /**
   * What the subscriber may read of every resource the question can reach (see `liveScope`): subscribers of
   * the same question and scope whose computations read the same statements share one computation.
   */
  scope: string
  /** The subscriber's own call answering the question, with its own params (hooks, `authorize`, rules). */
  compute(): Promise<R>
  /** The result as text, to tell a changed result from an equal one. */
  text(result: R): string
  deliver(result: R): void
  /**
   * Its own computation failed (its rights ended, say): the subscription ends with the error, or with the
   * result that `refuses` it.
   */
  fail(error: unknown): void
  /**
   * Whether a result its own call computed refuses the caller (not authenticated, forbidden) rather than
   * answers the question: such a result is its own, never delivered to the others.
   */
  refuses?(result: R): boolean
  /**
   * The resource the question reads and the client's filter, when known: a created or removed record outside
   * the filter cannot change a result that reads nothing else.
   */
  root?: { resource: ResolvedResource; filter?: Filter }
}
