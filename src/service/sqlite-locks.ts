import type { Knex } from 'knex'
import { setTimeout as pause } from 'node:timers/promises'
import { ConfigurationError } from '../errors'
import { betterSqliteClient, setUpEachConnection } from './sqlite-client'

export interface SqliteOptions {
  /**
   * How long a write waits for another process's write lock before it is a 503, in milliseconds (default
   * 5000, better-sqlite3's own). The wait leaves the event loop to other requests.
   */
  busyTimeout?: number
}

const DEFAULT_BUSY_TIMEOUT = 5000
/** Pauses between attempts to take the lock double from the first to the longest. */
const FIRST_PAUSE_MS = 2
const LONGEST_PAUSE_MS = 50

/** The knex Transaction internals this file replaces on each top-level transaction. */
interface TransactionInternals {
  begin(connection: unknown): Promise<unknown>
  trxClient: { query(connection: unknown, sql: string): Promise<unknown> }
  _evaluateContainer(config: unknown, container: unknown): Promise<unknown>
}

const adjusted = new WeakSet<object>()
/** SQLITE_BUSY errors of a BEGIN: nothing of the transaction has run, so it can be tried again. */
const lockedAtBegin = new WeakSet<object>()

function isBusy(error: unknown) {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

/**
 * better-sqlite3's busy timeout waits for another process's lock by sleeping on the event loop, so the whole
 * server stopped while one write waited. On a better-sqlite3 knex instance, every connection gets a busy
 * timeout of 0 and every top-level transaction waits for the lock itself, asynchronously (`beginWaiting`).
 * Other drivers are left as they are. Statements outside a transaction do not wait: the plugin writes only
 * in transactions, and in WAL mode (the example's) reads never meet a writer's lock. The first plugin
 * configured on a knex instance sets its busy timeout.
 */
export function waitForLocksAsynchronously(db: Knex, options: SqliteOptions = {}) {
  const busyTimeout = options.busyTimeout ?? DEFAULT_BUSY_TIMEOUT
  if (!Number.isFinite(busyTimeout) || busyTimeout < 0) {
    throw new ConfigurationError('sqlite.busyTimeout must be a number of milliseconds, 0 or more')
  }
  const client = betterSqliteClient(db)
  if (!client || adjusted.has(client)) return
  adjusted.add(client)
  setUpEachConnection(client, (connection: { pragma(sql: string): unknown }) => {
    connection.pragma('busy_timeout = 0')
  })
  const transaction = client.transaction.bind(client)
  client.transaction = (container, config, outerTransaction) => {
    const trx = transaction(container, config, outerTransaction)
    // Nested transactions are savepoints of a transaction that holds the lock already.
    if (!outerTransaction) beginWaiting(trx as TransactionInternals, busyTimeout)
    return trx
  }
}

/**
 * `BEGIN IMMEDIATE` takes the write lock before the transaction's work (the hook chain) starts, so waiting
 * for it can be retried without redoing anything; a deferred BEGIN would meet the lock at the first write,
 * halfway through. A BEGIN that finds the database locked fails the attempt (knex's own BEGIN would run the
 * work anyway, on a transaction already failed), which releases the connection, so reads go on meanwhile;
 * the next attempt follows a pause, until `busyTimeout` has passed and SQLITE_BUSY stands (a 503).
 */
function beginWaiting(trx: TransactionInternals, busyTimeout: number) {
  trx.begin = (connection) =>
    trx.trxClient.query(connection, 'BEGIN IMMEDIATE;').catch((error: unknown) => {
      if (isBusy(error)) lockedAtBegin.add(error as object)
      throw error
    })
  const evaluate = trx._evaluateContainer.bind(trx)
  trx._evaluateContainer = async (config, container) => {
    const deadline = Date.now() + busyTimeout
    for (let wait = FIRST_PAUSE_MS; ; wait = Math.min(2 * wait, LONGEST_PAUSE_MS)) {
      try {
        return await evaluate(config, container)
      } catch (error) {
        const left = deadline - Date.now()
        if (!lockedAtBegin.has(error as object) || left <= 0) throw error
        await pause(Math.min(wait, left))
      }
    }
  }
}
