import assert from 'node:assert/strict'
import type { TestServer } from './server'

async function timed(work: () => Promise<unknown>) {
  const started = performance.now()
  await work()
  return performance.now() - started
}

export interface Contention<T> {
  /** The probe's time alone: the median of five runs before `expensive`. */
  alone: number
  /** The probe's time while `expensive` runs. */
  during: number
  /** How long `expensive` took. */
  duration: number
  result: T
}

/**
 * How long another user's simple request (`probe`) takes while `expensive` runs: the probe starts as soon as
 * `expensive` has sent its first SQL statement, or once it is answered if it sends none (refused up front).
 */
export async function probeDuring<T>(
  server: TestServer,
  expensive: () => Promise<T>,
  probe: () => Promise<unknown>
): Promise<Contention<T>> {
  const alone: number[] = []
  for (let run = 0; run < 5; run++) alone.push(await timed(probe))
  alone.sort((a, b) => a - b)
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  const onStatement = () => started()
  server.db.once('query', onStatement)
  try {
    const began = performance.now()
    const answered = expensive().then((result) => ({ result, duration: performance.now() - began }))
    await Promise.race([running, answered])
    const during = await timed(probe)
    const { result, duration } = await answered
    return { alone: alone[2], during, duration, result }
  } finally {
    server.db.removeListener('query', onStatement)
  }
}

/** The probe was served about as fast as alone: within twenty times that, or half a second. */
export function assertServedMeanwhile({ alone, during }: { alone: number; during: number }) {
  const took = `the GET took ${Math.round(during)} ms (alone ${Math.round(alone)} ms)`
  assert.ok(during < Math.max(500, 20 * alone), took)
}

/**
 * The most pooled connections held or waited for at once while `work` runs, sampled whenever a statement
 * starts: what one request takes from the pool, and so from everyone else.
 */
export async function connectionsClaimedDuring(server: TestServer, work: () => Promise<unknown>) {
  const pool = (server.db.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool
  let most = 0
  const sample = () => {
    most = Math.max(most, pool.numUsed() + pool.numPendingAcquires())
  }
  server.db.on('query', sample)
  try {
    await work()
    return most
  } finally {
    server.db.removeListener('query', sample)
  }
}

/** `count` aliases of `field` in one operation, `a0: field a1: field ...`. */
export function aliased(count: number, field: string) {
  return Array.from({ length: count }, (_, index) => `a${index}: ${field}`).join(' ')
}
