import type { Knex } from 'knex'
import { setTimeout as pause } from 'node:timers/promises'
import { ConfigurationError } from '../common/errors'
import { betterSqliteClient, type SqliteOptions } from './better-sqlite3'
import { DEFAULTS } from '../resource/defaults'

/** Pauses between attempts to take the lock double from the first to the longest. */
const FIRST_PAUSE_MS = 2
const LONGEST_PAUSE_MS = 50

/** The knex Transaction internals this file replaces on each of the plugin's top-level transactions. */
interface TransactionInternals {
  begin(connection: unknown): Promise<unknown>
  trxClient: { query(connection: unknown, sql: string): Promise<unknown> }
  _evaluateContainer(config: unknown, container: unknown): Promise<unknown>
}

/** A better-sqlite3 connection's busy timeout, read and set. */
interface LockingConnection {
  pragma(sql: string, options?: { simple: boolean }): unknown
}

/** The busy timeout of each better-sqlite3 client the plugin writes through. */
const busyTimeouts = new WeakMap<object, number>()
/** SQLITE_BUSY errors of a BEGIN: nothing of the transaction has run, so it can be tried again. */
const lockedAtBegin = new WeakSet<object>()

function isBusy(error: unknown) {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

/**
 * better-sqlite3's busy timeout waits for another process's lock by sleeping on the event loop, so the whole
 * server stopped while one write waited. On a better-sqlite3 knex instance, the plugin's own transactions
 * (`writeTransaction`) wait for the lock themselves, asynchronously (`beginWaiting`); the instance, its
 * connections and the application's other transactions stay as the application configured them. Other
 * drivers are left as they are. The first plugin configured on a knex instance sets its busy timeout.
 */
export function waitForLocksAsynchronously(db: Knex, options: SqliteOptions = {}) {
  const busyTimeout = options.busyTimeout ?? DEFAULTS.sqliteBusyTimeout
  if (!Number.isFinite(busyTimeout) || busyTimeout < 0) {
    throw new ConfigurationError('sqlite.busyTimeout must be a number of milliseconds, 0 or more')
  }
  const client = betterSqliteClient(db)
  if (client && !busyTimeouts.has(client)) busyTimeouts.set(client, busyTimeout)
}

/**
 * `knex.transaction(work)`, for the plugin's writes: on better-sqlite3 it takes the write lock before `work`
 * starts, waiting for it asynchronously. Statements outside a transaction do not wait: the plugin writes only
 * in transactions, and in WAL mode (the example's) reads never meet a writer's lock.
 */
export function writeTransaction<T>(knex: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const client = betterSqliteClient(knex)
  const busyTimeout = client && busyTimeouts.get(client)
  if (busyTimeout === undefined) return knex.transaction(work)
  // What knex.transaction(work) does, with the transaction in hand before it begins (on a later tick).
  const trx = client!.transaction(work, { userParams: knex.userParams ?? {}, doNotRejectOnRollback: true })
  beginWaiting(trx as unknown as TransactionInternals, busyTimeout)
  return trx as unknown as Promise<T>
}

/**
 * `BEGIN IMMEDIATE` takes the write lock before the transaction's work (the hook chain) starts, so waiting
 * for it can be retried without redoing anything; a deferred BEGIN would meet the lock at the first write,
 * halfway through. A BEGIN that finds the database locked fails the attempt (knex's own BEGIN would run the
 * work anyway, on a transaction already failed), which releases the connection, so reads go on meanwhile;
 * the next attempt follows a pause, until `busyTimeout` has passed and SQLITE_BUSY stands (a 503).
 */
function beginWaiting(trx: TransactionInternals, busyTimeout: number) {
  trx.begin = async (connection) => {
    // Only this BEGIN must not sleep on the event loop: the connection's own busy timeout is back afterwards.
    const locking = connection as LockingConnection
    const ownTimeout = locking.pragma('busy_timeout', { simple: true })
    locking.pragma('busy_timeout = 0')
    try {
      return await trx.trxClient.query(connection, 'BEGIN IMMEDIATE;')
    } catch (error) {
      if (isBusy(error)) lockedAtBegin.add(error as object)
      throw error
    } finally {
      locking.pragma(`busy_timeout = ${Number(ownTimeout)}`)
    }
  }
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
