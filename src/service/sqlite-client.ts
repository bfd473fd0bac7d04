import type { Knex } from 'knex'

/** The parts of knex's better-sqlite3 client (or a transaction's client) that the plugin uses itself. */
export interface BetterSqliteClient {
  driverName: 'better-sqlite3'
  /** The pool's next free connection, or a transaction's own connection. */
  acquireConnection(): Promise<unknown>
  releaseConnection(connection: unknown): Promise<unknown>
  /** How knex hands values to better-sqlite3 (dates as epoch milliseconds, booleans as 0 and 1). */
  _formatBindings(bindings: readonly unknown[]): unknown[]
  /** The application's `postProcessResponse` knex option, applied to every result. */
  postProcessResponse(response: unknown, queryContext: unknown): unknown
  emit(event: 'query', query: object): boolean
  /** What `knex.transaction(work, config)` creates: a knex Transaction, which begins on a later tick. */
  transaction(work: (trx: Knex.Transaction) => unknown, config: object): Knex.Transaction
}

/** `db`'s client when it is better-sqlite3, whose statements run on the event loop; otherwise undefined. */
export function betterSqliteClient(db: Knex): BetterSqliteClient | undefined {
  const client = db.client as Partial<BetterSqliteClient>
  return client.driverName === 'better-sqlite3' ? (client as BetterSqliteClient) : undefined
}
