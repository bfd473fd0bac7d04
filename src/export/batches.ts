import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Keyset, Page } from '../query/model'
import type { ReadBatches } from '../resource/resolve'
import type { ResourceRecord } from '../service/resource-service'

/** Reads one keyset page of `limit` records: a call of the service's `find`, hooks and all. */
export type ReadPage = (keyset: Keyset, limit: number) => Promise<Page<ResourceRecord>>

/**
 * The next batch's size: halved after a read that blocked longer than the limit (a filter that matches few
 * rows makes SQLite scan many for each one), doubled back towards the full size after a quick one.
 */
function nextSize(size: number, blockedMs: number, batches: ReadBatches) {
  if (blockedMs > batches.maxMilliseconds) return Math.max(1, Math.floor(size / 2))
  if (blockedMs < batches.maxMilliseconds / 4) return Math.min(batches.size, size * 2)
  return size
}

/**
 * Every record an export matches, in order, a page of them at a time: one keyset page per `find` call. Each call is an ordinary
 * `find` returning a page, so hooks and @feathersjs/schema resolvers (resolveResult, resolveExternal) treat
 * exported records exactly as listed ones. The next page is read only when the consumer has taken the
 * previous one (back-pressure), no connection is held between pages, and returning early stops the reads.
 *
 * Each page after the first waits for the event loop's next turn: a client that reads as fast as the rows
 * come never makes the response wait for the socket, so on a synchronous driver (`blocking`) an export would
 * otherwise run to its end in one turn while every other request, concurrent exports included, waited.
 */
export async function* exportedPages(readPage: ReadPage, batches: ReadBatches, blocking: boolean) {
  let keyset: Keyset = {}
  let size = batches.size
  for (let first = true; ; first = false) {
    if (!first) await nextTurn()
    const started = performance.now()
    const page = await readPage(keyset, size)
    const readMs = performance.now() - started
    yield page.data
    if (!page.hasNextPage || !page.keyset) return
    keyset = page.keyset
    if (blocking) size = nextSize(size, readMs, batches)
  }
}
