import type { Knex } from 'knex'
import type { QueryEventSource } from './query-events'

/** What the plugin does on SQLite through better-sqlite3, whose statements run on the event loop. */
export interface SqliteOptions {
  /**
   * How long a write waits for another process's write lock before it is a 503, in milliseconds (default
   * 5000, better-sqlite3's own). The wait leaves the event loop to other requests.
   */
  busyTimeout?: number
  /**
   * Run the plugin's compiled reads (pages, gets, counts) on statements each connection prepared once and
   * keeps, within `limits.preparedStatementBytes` (default true). Only the plugin's own statements are kept;
   * `false` sends them through knex, which prepares every statement anew.
   */
  reuseStatements?: boolean
}

/** The parts of knex's better-sqlite3 client (or a transaction's client) that the plugin uses itself. */
export interface BetterSqliteClient extends QueryEventSource {
  driverName: 'better-sqlite3'
  /** The pool's next free connection, or a transaction's own connection. */
  acquireConnection(): Promise<unknown>
  releaseConnection(connection: unknown): Promise<unknown>
  /** How knex hands values to better-sqlite3 (dates as epoch milliseconds, booleans as 0 and 1). */
  _formatBindings(bindings: readonly unknown[]): unknown[]
  /** The application's `postProcessResponse` knex option, applied to every result. */
  postProcessResponse(response: unknown, queryContext: unknown): unknown
  /** What `knex.transaction(work, config)` creates: a knex Transaction, which begins on a later tick. */
  transaction(work: (trx: Knex.Transaction) => unknown, config: object): Knex.Transaction
}

/** `db`'s client when it is better-sqlite3, whose statements run on the event loop; otherwise undefined. */
export function betterSqliteClient(db: Knex): BetterSqliteClient | undefined {
  const client = db.client as Partial<BetterSqliteClient>
  return client.driverName === 'better-sqlite3' ? (client as BetterSqliteClient) : undefined
}
