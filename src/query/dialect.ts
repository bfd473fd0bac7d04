import type { Knex } from 'knex'
import { ConfigurationError } from '../errors'
import type { DateBucket } from './model'

/**
 * Everything that differs between SQL databases, in one table per feature. The rest of the compiler is
 * dialect-free knex.
 */
export interface Dialect {
  name: 'sqlite' | 'mysql' | 'postgres'
  /** Case-sensitive LIKE with `%` and `_` wildcards, the same on every database; `value` is `likeValue(pattern)`. */
  like(column: string, value: Knex.Value): Knex.Raw
  /** What a case-sensitive LIKE binds for a pattern (apart from the SQL, so a compiled statement can bind it). */
  likeValue(pattern: string): string
  /** Case-insensitive LIKE; it binds the pattern itself. */
  iLike(column: string, pattern: Knex.Value): Knex.Raw
  /** SQL for the start of the bucket holding a date column's value, as a `YYYY-MM-DD` string (UTC). */
  dateBucket(column: string, bucket: DateBucket): Knex.Raw
  /** AVG in double precision (the same digits on every database), with `??` for the column. */
  average: string
  /** The rows of a SELECT run with `knex.raw`, whose result each driver shapes its own way. */
  rawRows(result: unknown): Array<Record<string, unknown>>
}

type Rows = Array<Record<string, unknown>>

/** GLOB's own wildcards, as GLOB patterns matching them literally. */
const GLOB_LITERALS: Record<string, string> = { '[': '[[]', '*': '[*]', '?': '[?]' }
const LIKE_TO_GLOB: Record<string, string> = { ...GLOB_LITERALS, '%': '*', _: '?' }

/**
 * SQLite's LIKE ignores ASCII case, so case-sensitive matching uses GLOB with the pattern translated: `%` and
 * `_` become GLOB's wildcards, GLOB's own are made literal, and `\x` (LIKE's escape on MySQL and
 * PostgreSQL) is a literal x. The parser has refused a pattern ending in a lone backslash.
 */
function likeToGlob(pattern: string) {
  return pattern.replace(/\\([\s\S])|[[*?%_]/g, (match: string, escaped: string | undefined) =>
    escaped === undefined ? LIKE_TO_GLOB[match] : (GLOB_LITERALS[escaped] ?? escaped)
  )
}

function sqlite(knex: Knex): Dialect {
  // Dates are stored as epoch milliseconds (knex binds Date objects that way for better-sqlite3). Dividing by
  // 1000.0 keeps the fraction: integer division truncates towards zero, which moves the last second before
  // a pre-1970 midnight into the next day.
  const buckets: Record<DateBucket, string> = {
    DAY: "strftime('%Y-%m-%d', ?? / 1000.0, 'unixepoch')",
    // 'weekday 0' moves forward to the next Sunday (or stays on one); six days back is the ISO week's Monday.
    WEEK: "date(?? / 1000.0, 'unixepoch', 'weekday 0', '-6 days')",
    MONTH: "strftime('%Y-%m-01', ?? / 1000.0, 'unixepoch')",
    YEAR: "strftime('%Y-01-01', ?? / 1000.0, 'unixepoch')"
  }
  return {
    name: 'sqlite',
    like: (column, value) => knex.raw('?? GLOB ?', [column, value]),
    likeValue: likeToGlob,
    // SQLite's LIKE has no escape character unless told; MySQL's and PostgreSQL's is the backslash.
    iLike: (column, pattern) => knex.raw("LOWER(??) LIKE LOWER(?) ESCAPE '\\'", [column, pattern]),
    dateBucket: (column, bucket) => knex.raw(buckets[bucket], [column]),
    // SQLite's AVG is a double already.
    average: 'AVG(??)',
    rawRows: (result) => result as Rows
  }
}

function mysql(knex: Knex): Dialect {
  const buckets: Record<DateBucket, string> = {
    DAY: "DATE_FORMAT(??, '%Y-%m-%d')",
    // WEEKDAY() is 0 on Monday, so this is the ISO week's Monday whatever the server's week settings.
    WEEK: "DATE_FORMAT(DATE_SUB(??, INTERVAL WEEKDAY(??) DAY), '%Y-%m-%d')",
    MONTH: "DATE_FORMAT(??, '%Y-%m-01')",
    YEAR: "DATE_FORMAT(??, '%Y-01-01')"
  }
  return {
    name: 'mysql',
    // Case sensitivity follows the column's collation; the example's tables use utf8mb4_bin.
    like: (column, value) => knex.raw('?? LIKE ?', [column, value]),
    likeValue: (pattern) => pattern,
    iLike: (column, pattern) => knex.raw('LOWER(??) LIKE LOWER(?)', [column, pattern]),
    dateBucket: (column, bucket) =>
      knex.raw(buckets[bucket], buckets[bucket].includes('WEEKDAY') ? [column, column] : [column]),
    // MySQL averages integers as a DECIMAL rounded to 4 places; a floating-point zero makes it a double.
    average: 'AVG(?? + 0E0)',
    // mysql2 answers [rows, fields].
    rawRows: (result) => (result as [Rows, unknown])[0]
  }
}

function postgres(knex: Knex): Dialect {
  const units: Record<DateBucket, string> = { DAY: 'day', WEEK: 'week', MONTH: 'month', YEAR: 'year' }
  return {
    name: 'postgres',
    like: (column, value) => knex.raw('?? LIKE ?', [column, value]),
    likeValue: (pattern) => pattern,
    iLike: (column, pattern) => knex.raw('?? ILIKE ?', [column, pattern]),
    dateBucket: (column, bucket) =>
      knex.raw(`to_char(date_trunc('${units[bucket]}', ?? AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`, [column]),
    // Postgres averages integers as numeric (returned as text); as a double it agrees with the others.
    average: 'AVG(??::double precision)',
    rawRows: (result) => (result as { rows: Rows }).rows
  }
}

const dialects: Record<string, (knex: Knex) => Dialect> = {
  sqlite3: sqlite,
  mysql,
  postgresql: postgres
}

const cache = new WeakMap<Knex, Dialect>()

export function dialectOf(knex: Knex): Dialect {
  let dialect = cache.get(knex)
  if (!dialect) {
    const name = (knex.client as { dialect?: string }).dialect ?? ''
    const create = dialects[name]
    if (!create) throw new ConfigurationError(`Unsupported database client "${name}" (use SQLite, MySQL or PostgreSQL)`)
    dialect = create(knex)
    cache.set(knex, dialect)
  }
  return dialect
}
