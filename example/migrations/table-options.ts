import type { Knex } from 'knex'

const dialectOf = (db: Knex) => (db.client as { dialect?: string }).dialect

/**
 * On MySQL/MariaDB: utf8mb4 with a binary collation, so that equality, LIKE and ORDER BY are case-sensitive
 * and byte-ordered as they are on SQLite. (PostgreSQL's columns get theirs from `codePointString`.)
 */
export function portableTable(db: Knex, table: Knex.CreateTableBuilder) {
  if (dialectOf(db) === 'mysql') {
    table.charset('utf8mb4')
    table.collate('utf8mb4_bin')
  }
}

/**
 * A string column compared and sorted by code point, as SQLite does: on PostgreSQL the "C" collation, which
 * every server has, whatever collation the database was created with (en_US.UTF-8 sorts `a` before `B`).
 */
export function codePointString(db: Knex, table: Knex.CreateTableBuilder, name: string, length: number) {
  if (dialectOf(db) === 'postgresql') return table.specificType(name, `varchar(${length}) collate "C"`)
  return table.string(name, length)
}
