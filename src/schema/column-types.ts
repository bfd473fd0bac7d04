import type { FieldKind } from '../resource/field-kind'
import type { ColumnFacts } from './catalog-queries'

const MYSQL_INTEGERS = ['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint']
const POSTGRES_INTEGERS = ['smallint', 'integer', 'bigint']

/**
 * The column types that hold a field's values as the plugin writes and reads them, per database. A number
 * needs a column that keeps fractions; an integer fits any numeric column. MySQL's booleans are tinyint(1).
 * Enumerations (MySQL's `enum`, PostgreSQL's enum types) hold strings.
 */
const HOLDING_TYPES: Record<'mysql' | 'postgres', Record<FieldKind, string[]>> = {
  mysql: {
    string: ['varchar', 'char', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum', 'set'],
    integer: [...MYSQL_INTEGERS, 'decimal', 'numeric', 'float', 'double', 'real'],
    number: ['decimal', 'numeric', 'float', 'double', 'real'],
    boolean: ['tinyint', 'bit', 'boolean', 'bool'],
    date: ['datetime', 'timestamp', 'date']
  },
  postgres: {
    string: ['character varying', 'character', 'text', 'citext', 'uuid', 'enum'],
    integer: [...POSTGRES_INTEGERS, 'numeric', 'real', 'double precision'],
    number: ['numeric', 'real', 'double precision'],
    boolean: ['boolean'],
    date: ['timestamp with time zone', 'timestamp without time zone', 'date']
  }
}

type Affinity = 'integer' | 'text' | 'blob' | 'real' | 'numeric'

/** SQLite's type affinity of a declared type (https://sqlite.org/datatype3.html, 3.1). */
function sqliteAffinity(declaredType: string): Affinity {
  const type = declaredType.toUpperCase()
  if (type.includes('INT')) return 'integer'
  if (/CHAR|CLOB|TEXT/.test(type)) return 'text'
  if (type.includes('BLOB') || type.trim() === '') return 'blob'
  if (/REAL|FLOA|DOUB/.test(type)) return 'real'
  return 'numeric'
}

/**
 * SQLite stores any value in any column, but converts by affinity: text in a numeric column stays text only
 * where it does not look like a number, so a string field needs a text (or untyped) column; numbers,
 * booleans and dates need a numeric one. Dates are bound as epoch milliseconds, which a text column would
 * keep as text (`'915148800000.0'`), ordered and compared as text.
 */
const SQLITE_AFFINITIES: Record<FieldKind, Affinity[]> = {
  string: ['text', 'blob'],
  integer: ['integer', 'real', 'numeric'],
  number: ['integer', 'real', 'numeric'],
  boolean: ['integer', 'real', 'numeric'],
  date: ['integer', 'real', 'numeric']
}

/** Whether the column holds the values of a field of `kind`. */
export function holdsKind(database: 'sqlite' | 'mysql' | 'postgres', column: ColumnFacts, kind: FieldKind) {
  if (database === 'sqlite') return SQLITE_AFFINITIES[kind].includes(sqliteAffinity(column.declaredType))
  return HOLDING_TYPES[database][kind].includes(column.type)
}

/** The column's type for messages: as declared, with its length where the database has one. */
export function describeType(column: ColumnFacts) {
  if (column.declaredType && column.declaredType.toLowerCase() !== column.type)
    return column.declaredType.toLowerCase()
  return column.maxLength !== undefined ? `${column.type}(${column.maxLength})` : column.type
}
