import type { Knex } from 'knex'

/** One row of an upsert, as each database's statement takes it (every name a column, every value encoded). */
export interface UpsertRow {
  table: string
  idColumn: string
  /** The row an INSERT writes: the body, the create defaults, the first version. */
  insert: Record<string, unknown>
  /** The columns of `insert` the existing record takes (not its id, not the key). */
  set: string[]
  /** The version column, one more on the existing record (`concurrency.version`). */
  version?: string
  /** The unique key's columns. */
  key: string[]
  /** Adds the caller's reach for a patch (scope, live records) to a statement on the table's row. */
  reach(builder: Knex.QueryBuilder): Knex.QueryBuilder
}

/**
 * What became of the row: created or changed (with the record's id), or neither, because the record holding
 * the key is out of the caller's reach (`unreachable`) or another unique value of the row is taken (`taken`).
 */
export type UpsertOutcome = { id: unknown; created: boolean } | { refused: 'unreachable' | 'taken' }

export type UpsertStatement = (trx: Knex, row: UpsertRow) => Promise<UpsertOutcome>

const INSERTED = '__fq_inserted'

/**
 * PostgreSQL: one `INSERT ... ON CONFLICT (key) DO UPDATE ... WHERE reach RETURNING`, which locks the record
 * holding the key and evaluates the reach on its latest version. No row back: the reach refused it. A row
 * whose `xmax` is 0 was inserted (an updated one carries the updating transaction's id). Another unique
 * value taken fails the statement, which `writeError` names.
 */
export const postgresUpsert: UpsertStatement = async (trx, row) => {
  const merged: Record<string, Knex.Raw> = {}
  for (const column of row.set.length ? row.set : row.key) merged[column] = trx.raw('excluded.??', [column])
  if (row.version) merged[row.version] = trx.raw('??.?? + 1', [row.table, row.version])
  const statement = trx(row.table).insert(row.insert).onConflict(row.key).merge(merged)
  const returned = (await row
    .reach(statement)
    .returning([row.idColumn, trx.raw(`(xmax = 0) AS ${INSERTED}`)])) as Array<Record<string, unknown>>
  if (returned.length === 0) return { refused: 'unreachable' }
  return { id: returned[0][row.idColumn], created: returned[0][INSERTED] === true }
}

/** The session variable a MariaDB upsert leaves its decision in: NULL inserted, 1 changed, 0 refused. */
const DECISION = '@__fq_upsert'

/**
 * MariaDB: `INSERT ... ON DUPLICATE KEY UPDATE`, which has no WHERE. The record holding the key is locked by
 * the statement itself, and its first assignment decides once, on that locked version, whether the reach
 * admits it (and it holds this key: a duplicate of another unique index must not change that record),
 * keeping the decision in a session variable. Every assignment takes the new value only where it did;
 * assignments run left to right and see the ones before, so the reach is read before any column changes.
 * A locking read of the key then tells which record it is and what became of it.
 */
export const mysqlUpsert: UpsertStatement = async (trx, row) => {
  const condition = whereClause(row.reach(trx(row.table).select(trx.raw('1'))))
  const sameKey = row.key.map((column) => trx.raw('?? <=> VALUES(??)', [column, column]).toQuery())
  const decide = `(${condition.sql}) AND ${sameKey.join(' AND ')}`
  const merged: Record<string, Knex.Raw> = {
    [row.idColumn]: trx.raw(`IF(${DECISION} := COALESCE(${decide}, 0), ??, ??)`, [
      ...condition.bindings,
      row.idColumn,
      row.idColumn
    ])
  }
  for (const column of row.set) {
    merged[column] = trx.raw(`IF(${DECISION}, VALUES(??), ??)`, [column, column])
  }
  if (row.version) merged[row.version] = trx.raw(`IF(${DECISION}, ?? + 1, ??)`, [row.version, row.version])
  await trx.raw(`SET ${DECISION} = NULL`)
  await trx(row.table).insert(row.insert).onConflict().merge(merged)
  const byKey = Object.fromEntries(row.key.map((column) => [column, row.insert[column]]))
  const [found] = (await trx(row.table)
    .select(row.idColumn, trx.raw(`${DECISION} AS ??`, [INSERTED]))
    .where(byKey)
    .forUpdate()) as Array<Record<string, unknown>>
  if (!found) return { refused: 'taken' }
  const decision = found[INSERTED]
  if (decision === null) return { id: found[row.idColumn], created: true }
  return Number(decision) === 1 ? { id: found[row.idColumn], created: false } : { refused: 'unreachable' }
}

/**
 * SQLite: a transaction of the plugin's holds the database's one write lock from its start (`writeTransaction`),
 * so nothing can come between reading which record holds the key and writing it.
 */
export const sqliteUpsert: UpsertStatement = async (trx, row) => {
  const byKey = Object.fromEntries(row.key.map((column) => [column, row.insert[column]]))
  const [found] = (await trx(row.table).select(row.idColumn).where(byKey).limit(1)) as Array<
    Record<string, unknown>
  >
  if (!found) {
    // SQLite answers the new row's rowid, which is the id unless the body gave one.
    const [rowid] = (await trx(row.table).insert(row.insert)) as unknown[]
    return { id: row.insert[row.idColumn] ?? rowid, created: true }
  }
  const id = found[row.idColumn]
  const changes: Record<string, unknown> = {}
  for (const column of row.set.length ? row.set : row.key) changes[column] = row.insert[column]
  if (row.version) changes[row.version] = trx.raw('?? + 1', [row.version])
  const changed = await row
    .reach(trx(row.table).where(`${row.table}.${row.idColumn}`, id as Knex.Value))
    .update(changes)
  return changed ? { id, created: false } : { refused: 'unreachable' }
}

/**
 * The condition of a SELECT's WHERE, as SQL with its bindings: a MariaDB upsert decides with it inside an
 * assignment, where knex's builders cannot go. Only the plugin's own filter compiler builds the statement.
 */
function whereClause(select: Knex.QueryBuilder): { sql: string; bindings: readonly Knex.Value[] } {
  const { sql, bindings } = select.toSQL()
  const at = sql.indexOf(' where ')
  return at < 0
    ? { sql: '1', bindings: [] }
    : { sql: sql.slice(at + ' where '.length), bindings: bindings as readonly Knex.Value[] }
}
