import type { Knex } from 'knex'
import { dialectOf } from '../dialect/dialect-of'
import type { ResolvedResource } from '../resource/resolved'
import type { SchemaMismatch } from './compare'

/** One unique index's columns (a primary key's too), by table. */
type UniqueIndexes = Map<string, string[][]>

type UniqueIndexQuery = (knex: Knex, tables: string[]) => Promise<Array<Record<string, unknown>>>

const placeholders = (tables: string[]) => tables.map(() => '?').join(', ')

async function rows(knex: Knex, sql: string, bindings: Knex.RawBinding[]) {
  return dialectOf(knex).rawRows(await knex.raw(sql, bindings))
}

/** Each database's unique indexes of some tables as rows of `table`, `index`, `column`, in one statement. */
const QUERIES: Record<'sqlite' | 'mysql' | 'postgres', UniqueIndexQuery> = {
  sqlite: (knex, tables) =>
    rows(
      knex,
      `SELECT m.name AS "table", il.name AS "index", ii.name AS "column"
       FROM sqlite_master m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii
       WHERE m.type = 'table' AND il."unique" = 1 AND il.partial = 0 AND m.name IN (${placeholders(tables)})`,
      tables
    ),
  mysql: (knex, tables) =>
    rows(
      knex,
      `SELECT TABLE_NAME AS \`table\`, INDEX_NAME AS \`index\`, COLUMN_NAME AS \`column\`
       FROM information_schema.STATISTICS
       WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0 AND TABLE_NAME IN (${placeholders(tables)})`,
      tables
    ),
  // Partial indexes are left out: ON CONFLICT (columns) is not answered by one without its predicate.
  postgres: (knex, tables) =>
    rows(
      knex,
      `SELECT t.relname AS "table", i.relname AS "index", a.attname AS "column"
       FROM pg_index x
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY (x.indkey)
       WHERE x.indisunique AND x.indpred IS NULL AND pg_table_is_visible(t.oid)
         AND t.relname IN (${placeholders(tables)})`,
      tables
    )
}

async function uniqueIndexes(knex: Knex, tables: string[]): Promise<UniqueIndexes> {
  const database = dialectOf(knex).name
  const byIndex = new Map<string, { table: string; columns: string[] }>()
  for (const row of await QUERIES[database](knex, tables)) {
    const id = `${row.table}\u0000${row.index}`
    const entry = byIndex.get(id) ?? { table: String(row.table), columns: [] }
    entry.columns.push(String(row.column))
    byIndex.set(id, entry)
  }
  const indexes: UniqueIndexes = new Map()
  for (const { table, columns } of byIndex.values()) {
    indexes.set(table, [...(indexes.get(table) ?? []), columns])
  }
  return indexes
}

/**
 * The resources whose `upsert.key` no unique index of their table spans exactly: there an upsert could not
 * find the record holding the key (PostgreSQL refuses the statement; MariaDB would insert a second record).
 * SQLite and MySQL compare column names whatever their case, as their SQL does.
 */
export async function upsertKeyMismatches(
  knex: Knex,
  resources: ResolvedResource[]
): Promise<SchemaMismatch[]> {
  const keyed = resources.filter((resource) => resource.upsertKey)
  if (keyed.length === 0) return []
  const exact = dialectOf(knex).name === 'postgres'
  const name = (column: string) => (exact ? column : column.toLowerCase())
  const indexes = await uniqueIndexes(
    knex,
    keyed.map((resource) => resource.table)
  )
  const mismatches: SchemaMismatch[] = []
  for (const resource of keyed) {
    const key = resource.upsertKey!.map((field) => name(field.column)).sort()
    // An INTEGER PRIMARY KEY is SQLite's rowid, which no index lists: the id is unique anyway.
    if (key.length === 1 && key[0] === name(resource.idField.column)) continue
    const spans = (columns: string[]) => columns.map(name).sort().join('\u0000') === key.join('\u0000')
    if ((indexes.get(resource.table) ?? []).some(spans)) continue
    mismatches.push({
      resource: resource.name,
      field: 'upsert.key',
      table: resource.table,
      kind: 'missing unique index',
      detail:
        `has no unique index on exactly (${key.join(', ')}), which upsert.key needs ` +
        `(a migration adds it with table.unique([${key.map((column) => `'${column}'`).join(', ')}]))`
    })
  }
  return mismatches
}
