import type { Knex } from 'knex'

/**
 * On MySQL/MariaDB: utf8mb4 with a binary collation, so that equality, LIKE and ORDER BY are case-sensitive
 * and byte-ordered as they are on SQLite. Other databases need nothing.
 */
export function portableTable(db: Knex, table: Knex.CreateTableBuilder) {
  if ((db.client as { dialect?: string }).dialect === 'mysql') {
    table.charset('utf8mb4')
    table.collate('utf8mb4_bin')
  }
}
