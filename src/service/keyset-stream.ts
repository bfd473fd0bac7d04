import type { Knex } from 'knex'
import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { orderSql, whereAfter, type SortTerm } from '../query/compile-sort'
import type { ReadBatches } from '../resource/resolve'
import { runQuery } from './database-errors'

type Row = Record<string, unknown>

/** better-sqlite3 runs each statement on the event loop: while it reads, the server answers nobody. */
function readsSynchronously(builder: Knex.QueryBuilder) {
  return (builder.client as { driverName?: string }).driverName === 'better-sqlite3'
}

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
 * Every row `builder` selects, in the order of `terms`, read in keyset batches: the next batch is read only
 * when the consumer has taken the previous one (back-pressure), no connection is held between batches, and
 * destroying the stream stops the reads. (Knex's own stream() buffers the whole result on SQLite.)
 *
 * Each batch after the first waits for the event loop's next turn: a client that reads as fast as the rows
 * come never makes the response wait for the socket, so on a synchronous driver an export would otherwise
 * run to its end in one turn while every other request, concurrent exports included, waited for it.
 */
export function keysetStream(
  builder: Knex.QueryBuilder,
  terms: SortTerm[],
  decode: (row: Row) => Row,
  batches: ReadBatches
): Readable {
  const order = orderSql(terms)
  const blocking = readsSynchronously(builder)
  async function* rows() {
    let last: Row | undefined
    let size = batches.size
    for (;;) {
      const batch = builder.clone()
      if (last) {
        await nextTurn()
        whereAfter(batch, terms, last)
      }
      const started = performance.now()
      const rows: Row[] = await runQuery(batch.orderByRaw(order.sql, order.bindings).limit(size))
      const readMs = performance.now() - started
      for (const row of rows) yield decode(row)
      if (rows.length < size) return
      last = rows[rows.length - 1]
      if (blocking) size = nextSize(size, readMs, batches)
    }
  }
  return Readable.from(rows(), { objectMode: true, highWaterMark: batches.size })
}
