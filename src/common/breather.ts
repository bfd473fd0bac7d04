import { setImmediate } from 'node:timers/promises'

/** How many decisions (a subscriber's or a connection's admission) are made between two turns of the loop. */
const DECISIONS_PER_BREATH = 16

/**
 * A pause that lets the event loop answer other requests. Work decided in promises that settle at once (an
 * `authorize` rule without I/O) runs as microtasks, which starve every socket until the loop turns: one write
 * fanned out to thousands of subscribers must take breaths.
 */
export function breathEvery(decisions = DECISIONS_PER_BREATH) {
  let count = 0
  return async () => {
    if (++count % decisions === 0) await setImmediate()
  }
}
