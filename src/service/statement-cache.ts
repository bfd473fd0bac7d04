import type { Knex } from 'knex'
import { betterSqliteClient, setUpEachConnection } from './sqlite-client'

interface PreparingConnection {
  prepare(sql: string): unknown
}

/** Statements kept per connection, within the byte budget of their SQL text. */
const STATEMENTS_PER_CONNECTION = 500

const caching = new WeakSet<object>()

interface Statement {
  safeIntegers(toggle?: boolean): unknown
}

/** Transaction control: knex names each nested transaction's savepoint anew, so these texts never repeat. */
const NOT_KEPT = /^\s*(savepoint|release|rollback|begin|commit)\b/i

/**
 * Makes a better-sqlite3 connection hand back the statement it prepared before for the same SQL text. Knex
 * prepares every statement again, which costs about as much as running a small query; SQLite re-prepares a
 * kept statement by itself when the schema changes. The least recently prepared text is dropped first, once
 * 500 are kept or their SQL text would pass `maxBytes` (SQLite's own memory for a statement is 20 to 60
 * times its text); a longer text is not kept. A statement a query changes (`safeIntegers`, which knex sets
 * only when a query asks) is not handed out again.
 */
export function reusePreparedStatements(connection: PreparingConnection, maxBytes: number) {
  if (caching.has(connection)) return
  caching.add(connection)
  const prepare = connection.prepare.bind(connection)
  const statements = new Map<string, Statement>()
  let bytes = 0
  const drop = (sql: string) => {
    if (statements.delete(sql)) bytes -= sql.length
  }
  connection.prepare = (sql: string) => {
    let statement = statements.get(sql)
    if (statement) {
      // Map order is insertion order: moving a hit to the end keeps the oldest entry the least recently used.
      statements.delete(sql)
    } else {
      statement = prepare(sql) as Statement
      if (NOT_KEPT.test(sql) || sql.length > maxBytes) return statement
      const toggle = statement.safeIntegers.bind(statement)
      statement.safeIntegers = (value?: boolean) => {
        drop(sql)
        return toggle(value)
      }
      while (statements.size >= STATEMENTS_PER_CONNECTION || bytes + sql.length > maxBytes) {
        drop(statements.keys().next().value!)
      }
      bytes += sql.length
    }
    statements.set(sql, statement)
    return statement
  }
}

/**
 * On better-sqlite3, every connection the knex instance hands out (to queries and transactions alike)
 * reuses its prepared statements. Other drivers are left as they are: mysql2 sends knex's queries as text.
 */
export function reuseStatementsOf(db: Knex, maxBytes: number) {
  const client = betterSqliteClient(db)
  if (client) setUpEachConnection<PreparingConnection>(client, (connection) => reusePreparedStatements(connection, maxBytes))
}
