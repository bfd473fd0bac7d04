/**
 * The helper a generated migration declares for its text columns, written into the file (not imported from
 * the plugin) so that the migration stays what it was when it ran. The plugin's filters, sorting and keyset
 * cursors compare text by code point on every database: SQLite's default, PostgreSQL's "C" collation, and on
 * MySQL/MariaDB a binary collation without padding (with padding, `'a' = 'a '` holds).
 */
export const CODE_POINT_TEXT = `
/**
 * Text columns that compare by code point, as feathers-query expects on every database: SQLite's default,
 * PostgreSQL's "C" collation, MariaDB's utf8mb4_nopad_bin, MySQL 8's utf8mb4_0900_bin (5.7 has only the
 * padding utf8mb4_bin).
 */
async function codePointText(knex: Knex) {
  const dialect = (knex.client as { dialect?: string }).dialect
  let collation = ''
  if (dialect === 'postgresql') collation = ' collate "C"'
  if (dialect === 'mysql') {
    const [rows] = await knex.raw('SELECT VERSION() AS version')
    const version = String(rows[0].version)
    const name = /mariadb/i.test(version)
      ? 'utf8mb4_nopad_bin'
      : Number(version.split('.')[0]) >= 8
        ? 'utf8mb4_0900_bin'
        : 'utf8mb4_bin'
    collation = \` character set utf8mb4 collate \${name}\`
  }
  const mysqlText = (length?: number) => (length !== undefined && length <= 16383 ? 'text' : 'mediumtext')
  return {
    string: (table: Knex.TableBuilder, name: string, length: number) =>
      table.specificType(name, \`varchar(\${length})\${collation}\`),
    long: (table: Knex.TableBuilder, name: string, length?: number) =>
      table.specificType(name, \`\${dialect === 'mysql' ? mysqlText(length) : 'text'}\${collation}\`)
  }
}
`
