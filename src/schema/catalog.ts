import type { Knex } from 'knex'
import { dialectOf } from '../dialect/dialect-of'
import { CATALOG_QUERIES, type ColumnFacts } from './catalog-queries'

export type { ColumnFacts } from './catalog-queries'

/** The columns of a database's tables, by table name and column name. */
export class Catalog {
  private readonly tables = new Map<string, Map<string, ColumnFacts>>()

  constructor(
    readonly database: 'sqlite' | 'mysql' | 'postgres',
    columns: ColumnFacts[]
  ) {
    for (const column of columns) {
      let table = this.tables.get(column.table)
      if (!table) this.tables.set(column.table, (table = new Map()))
      table.set(column.name, column)
    }
  }

  hasTable(table: string) {
    return this.tables.has(table)
  }

  /** The table's columns in the database's order. */
  columnsOf(table: string): ColumnFacts[] {
    return [...(this.tables.get(table)?.values() ?? [])]
  }

  /**
   * A column of a table. SQLite and MySQL match column names whatever their case, as their SQL does;
   * PostgreSQL's quoted names (knex quotes every name) match exactly.
   */
  column(table: string, name: string): ColumnFacts | undefined {
    const columns = this.tables.get(table)
    const exact = columns?.get(name)
    if (exact || this.database === 'postgres' || !columns) return exact
    return [...columns.values()].find((column) => column.name.toLowerCase() === name.toLowerCase())
  }
}

/** Every column of `tables` that exists, in one statement of the database's catalog. */
export async function readCatalog(knex: Knex, tables: string[]): Promise<Catalog> {
  const dialect = dialectOf(knex)
  const unique = [...new Set(tables)]
  const columns = unique.length > 0 ? await CATALOG_QUERIES[dialect.name](knex, unique) : []
  return new Catalog(dialect.name, columns)
}
