import type { Knex } from 'knex'
import { dialectOf } from '../dialect/dialect-of'

/** What the start-up check and the migration diff need to know of a column, the same for every database. */
export interface ColumnFacts {
  table: string
  name: string
  /** The type's name, lower case, without length or modifiers: `varchar`, `int`, `timestamp with time zone`. */
  type: string
  /** The type as declared (SQLite), or in full (MySQL's `int(10) unsigned`, PostgreSQL's `character varying`). */
  declaredType: string
  nullable: boolean
  /** The database fills it when an insert leaves it out: a default, an auto-increment, an identity. */
  hasDefault: boolean
  /** Its values are made by the database (auto-increment, identity, serial, SQLite's rowid). */
  generated: boolean
  /** The most characters it holds, where the database enforces one (not SQLite). */
  maxLength?: number
  /** MySQL's unsigned integers, which a foreign key referencing the column must share. */
  unsigned: boolean
}

type CatalogQuery = (knex: Knex, tables: string[]) => Promise<ColumnFacts[]>

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value))

async function rows(knex: Knex, sql: string, bindings: Knex.RawBinding[]) {
  return dialectOf(knex).rawRows(await knex.raw(sql, bindings))
}

const placeholders = (tables: string[]) => tables.map(() => '?').join(', ')

/** SQLite's tables and views through `pragma_table_info`, one statement for all of them. */
const sqlite: CatalogQuery = async (knex, tables) => {
  const found = await rows(
    knex,
    `SELECT m.name AS "table", p.name AS "column", p.type AS "type", p."notnull" AS "notNull",
       p.dflt_value AS "default", p.pk AS "pk"
     FROM sqlite_master m JOIN pragma_table_info(m.name) p
     WHERE m.type IN ('table', 'view') AND m.name IN (${placeholders(tables)})`,
    tables
  )
  const keyColumns = new Map<string, number>()
  for (const row of found)
    if (Number(row.pk) > 0) keyColumns.set(text(row.table), (keyColumns.get(text(row.table)) ?? 0) + 1)
  return found.map((row) => {
    const declaredType = text(row.type)
    // An INTEGER PRIMARY KEY of its own is the rowid, which SQLite numbers.
    const rowid =
      Number(row.pk) > 0 && keyColumns.get(text(row.table)) === 1 && /^integer$/i.test(declaredType)
    return {
      table: text(row.table),
      name: text(row.column),
      type: declaredType.replace(/\(.*$/, '').trim().toLowerCase(),
      declaredType,
      nullable: !Number(row.notNull) && !rowid,
      hasDefault: row.default !== null || rowid,
      generated: rowid,
      unsigned: false
    }
  })
}

const mysql: CatalogQuery = async (knex, tables) => {
  const found = await rows(
    knex,
    `SELECT TABLE_NAME AS \`table\`, COLUMN_NAME AS \`column\`, DATA_TYPE AS \`type\`,
       COLUMN_TYPE AS \`declaredType\`, IS_NULLABLE AS \`nullable\`, COLUMN_DEFAULT AS \`default\`,
       CHARACTER_MAXIMUM_LENGTH AS \`maxLength\`, EXTRA AS \`extra\`
     FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (${placeholders(tables)})
     ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    tables
  )
  return found.map((row) => {
    const generated = /auto_increment/i.test(text(row.extra))
    // MariaDB reports no default as the text NULL, MySQL as SQL NULL.
    const defaulted = row.default !== null && text(row.default).toUpperCase() !== 'NULL'
    return {
      table: text(row.table),
      name: text(row.column),
      type: text(row.type).toLowerCase(),
      declaredType: text(row.declaredType).toLowerCase(),
      nullable: text(row.nullable) === 'YES',
      hasDefault: defaulted || generated,
      generated,
      maxLength: row.maxLength === null ? undefined : Number(row.maxLength),
      unsigned: /unsigned/i.test(text(row.declaredType))
    }
  })
}

/**
 * PostgreSQL: for each name, the table an unqualified name reaches, as knex's statements name it: that of the
 * first schema on the search path that has one.
 */
const postgres: CatalogQuery = async (knex, tables) => {
  const found = await rows(
    knex,
    `SELECT c.table_name AS "table", c.column_name AS "column", c.data_type AS "type", c.udt_name AS "udt",
       (SELECT t.typtype FROM pg_type t JOIN pg_namespace s ON s.oid = t.typnamespace
         WHERE t.typname = c.udt_name AND s.nspname = c.udt_schema) AS "udtKind",
       c.is_nullable AS "nullable", c.column_default AS "default", c.is_identity AS "identity",
       c.character_maximum_length AS "maxLength"
     FROM information_schema.columns c
     WHERE c.table_name IN (${placeholders(tables)})
       AND to_regclass(quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))
         = to_regclass(quote_ident(c.table_name))
     ORDER BY c.table_name, c.ordinal_position`,
    tables
  )
  return found.map((row) => {
    const generated = text(row.identity) === 'YES' || /^nextval\(/i.test(text(row.default))
    const type = text(row.type).toLowerCase()
    const udt = text(row.udt).toLowerCase()
    return {
      table: text(row.table),
      name: text(row.column),
      // Enum types are all `enum`; extension types (citext) are named by their own name.
      type: type !== 'user-defined' ? type : text(row.udtKind) === 'e' ? 'enum' : udt,
      declaredType: type === 'user-defined' ? udt : type,
      nullable: text(row.nullable) === 'YES',
      hasDefault: row.default !== null || generated,
      generated,
      maxLength: row.maxLength === null ? undefined : Number(row.maxLength),
      unsigned: false
    }
  })
}

/** How each database lists the columns of some tables: one catalog statement, whatever their number. */
export const CATALOG_QUERIES: Record<'sqlite' | 'mysql' | 'postgres', CatalogQuery> = {
  sqlite,
  mysql,
  postgres
}
