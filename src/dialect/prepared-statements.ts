import type { Knex } from 'knex'
import { betterSqliteClient, type BetterSqliteClient } from './better-sqlite3'
import { queryUid, reportError, reportResponse } from './query-events'

/** A better-sqlite3 connection, as far as the plugin's own reads use it. */
interface PreparingConnection {
  prepare(sql: string): PreparedStatement
  __knexUid?: string
  __knexTxId?: string
}

interface PreparedStatement {
  all(bindings: unknown[]): unknown[]
}

/** Statements kept per connection, within the byte budget of their SQL text. */
const STATEMENTS_PER_CONNECTION = 500

/**
 * The statements one connection prepared for the plugin. The least recently used text is dropped first, once
 * 500 are kept or their SQL text would pass `maxBytes` (SQLite's own memory for a statement is 20 to 60
 * times its text); a longer text is not kept. SQLite re-prepares a kept statement by itself when the
 * schema changes.
 */
class PreparedStatements {
  private readonly statements = new Map<string, PreparedStatement>()
  private bytes = 0

  constructor(private readonly connection: PreparingConnection) {}

  get(sql: string, maxBytes: number) {
    let statement = this.statements.get(sql)
    if (statement) {
      // Map order is insertion order: moving a hit to the end keeps the oldest entry the least recently used.
      this.statements.delete(sql)
    } else {
      statement = this.connection.prepare(sql)
      if (sql.length > maxBytes) return statement
      while (this.statements.size >= STATEMENTS_PER_CONNECTION || this.bytes + sql.length > maxBytes) {
        const oldest = this.statements.keys().next().value!
        this.statements.delete(oldest)
        this.bytes -= oldest.length
      }
      this.bytes += sql.length
    }
    this.statements.set(sql, statement)
    return statement
  }
}

const preparedBy = new WeakMap<object, PreparedStatements>()

/**
 * Whether the plugin runs its compiled reads on `db` itself, on statements it prepared before: knex
 * prepares every statement again, which on better-sqlite3 costs about as much as running a small query.
 * Other drivers get them through knex: mysql2 sends knex's queries as text.
 */
export function preparesStatements(db: Knex) {
  return betterSqliteClient(db) !== undefined
}

/**
 * The rows of one of the plugin's compiled reads (`sql`, its `bindings`) on `knex`, the pool or the call's
 * transaction, on the connection's statement for that text. Only the plugin's statements are kept: the
 * knex instance and its connections stay as the application made them. As knex would, it binds the values
 * the way knex's better-sqlite3 client does, applies the `postProcessResponse` option and reports the
 * statement to `knex.on('query')` and its result to `knex.on('query-response')` listeners, under a query id
 * of its own.
 */
export async function allPrepared(knex: Knex, sql: string, bindings: unknown[], maxBytes: number) {
  const client = knex.client as BetterSqliteClient
  const connection = (await client.acquireConnection()) as PreparingConnection
  try {
    const { __knexUid, __knexTxId } = connection
    const query = { method: 'raw', sql, bindings, __knexQueryUid: queryUid() }
    client.emit('query', { __knexUid, __knexTxId, ...query })
    let prepared = preparedBy.get(connection)
    if (!prepared) preparedBy.set(connection, (prepared = new PreparedStatements(connection)))
    let rows: unknown
    try {
      rows = prepared.get(sql, maxBytes).all(client._formatBindings(bindings))
    } catch (error) {
      reportError(client, connection, query, error)
      throw error
    }
    const response = client.postProcessResponse(rows, undefined) as Array<Record<string, unknown>>
    reportResponse(client, connection, query, response)
    return response
  } finally {
    await client.releaseConnection(connection)
  }
}
