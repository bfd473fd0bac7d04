import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Keyset } from '../../model/query'
import type { Page } from '../../model/page'
import type { ReadBatches } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'

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

/** A page read, with how long the read kept the event loop (a synchronous driver's) or the caller waiting. */
async function timedRead(readPage: ReadPage, keyset: Keyset, limit: number) {
  const started = performance.now()
  const page = await readPage(keyset, limit)
  return { page, readMs: performance.now() - started }
}

/**
 * Every record an export matches, in order, from `start` (a resumed export's position), a page of them at a
 * time: one keyset page per `find` call. Each call is an ordinary `find` returning a page, so hooks and
 * @feathersjs/schema resolvers (resolveResult, resolveExternal) treat exported records exactly as listed ones. Returning early stops the reads, and no
 * connection is held between reads.
 *
 * On a driver that waits for the database off the event loop, the next page is read while the consumer
 * encodes and sends this one, never more than that one page ahead (back-pressure): the database's time per
 * page and Node's overlap instead of adding up. On a synchronous driver (`blocking`) reading ahead would gain
 * nothing, the read running on the event loop too; instead each read after the first waits for the event
 * loop's next turn: a client that reads as fast as the rows come never makes the response wait for the
 * socket, so an export would otherwise run to its end in one turn while every other request, concurrent
 * exports included, waited.
 */
export async function* exportedPages(
  readPage: ReadPage,
  batches: ReadBatches,
  blocking: boolean,
  start: Keyset = {}
) {
  let size = batches.size
  let reading = timedRead(readPage, start, size)
  for (;;) {
    const { page, readMs } = await reading
    const keyset = page.hasNextPage ? page.keyset : undefined
    if (keyset && !blocking) {
      reading = timedRead(readPage, keyset, size)
      // Awaited on the next round; if the consumer stops first, its failure has nobody to tell.
      reading.catch(() => undefined)
    }
    yield page.data
    if (!keyset) return
    if (blocking) {
      size = nextSize(size, readMs, batches)
      await nextTurn()
      reading = timedRead(readPage, keyset, size)
    }
  }
}
