/** `live` of the plugin's options: how live queries share and bound their computations. */
export interface LiveOptions {
  /**
   * How long a live result waits after the first write that may change it before it is computed again, in
   * milliseconds (default 50): the writes of that window cost one computation.
   */
  coalesceMs?: number
  /** Distinct live questions (query and scope) one process keeps at once (default 1000); one more is refused. */
  maxQuestions?: number
  /** Computations of live results running at once in one process (default 4); the others wait their turn. */
  maxConcurrentComputations?: number
  /** Live queries one Feathers client connection watches at once through the service (default 10). */
  maxPerConnection?: number
  /** The path of the Feathers service through which Feathers clients watch results (default `live-queries`). */
  path?: string
}

export type ResolvedLiveOptions = Required<LiveOptions>

export const LIVE_DEFAULTS: ResolvedLiveOptions = {
  coalesceMs: 50,
  maxQuestions: 1000,
  maxConcurrentComputations: 4,
  maxPerConnection: 10,
  path: 'live-queries'
}

export function resolveLiveOptions(options: LiveOptions | undefined): ResolvedLiveOptions {
  return { ...LIVE_DEFAULTS, ...options }
}
