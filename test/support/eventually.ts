import assert from 'node:assert/strict'

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `condition` every `everyMs` until it answers something truthy, and answers that; fails, naming
 * `what`, once `ms` have passed without it.
 */
export async function pollUntil<T>(
  condition: () => T | Promise<T>,
  what: string,
  { ms = 10000, everyMs = 10 } = {}
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await condition()
    if (value) return value
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what}`)
    await pause(everyMs)
  }
}

/**
 * Writes `probe()` until `heard()`: a subscription goes live some time after it is sent, and what was written
 * before then never reaches it. Each probe has `roundMs` to be heard before the next is written; the loop
 * fails, naming `what`, once `ms` have passed.
 */
export async function probeUntil(
  probe: () => Promise<unknown>,
  heard: () => boolean,
  what: string,
  ms = 10000,
  roundMs = 200
) {
  const deadline = Date.now() + ms
  for (;;) {
    await probe()
    const roundEnd = Math.min(Date.now() + roundMs, deadline)
    while (!heard() && Date.now() < roundEnd) await pause(10)
    if (heard()) return
    if (Date.now() >= deadline) assert.fail(`timed out after ${ms} ms probing until ${what}`)
  }
}
