import type { Knex } from 'knex'
import { ConfigurationError } from '../common/errors'
import type { DbValue } from '../resource/codec'

/** A column (`table.column`, quoted by knex) or the expression of a SQL-computed field. */
export type SqlColumn = string | Knex.Raw

/**
 * Everything that differs between SQL databases, in one table per feature. The rest of the compiler is
 * dialect-free knex.
 */
export interface Dialect {
  name: 'sqlite' | 'mysql' | 'postgres'
  /** The knex instance the dialect builds its SQL with (and SQL-computed fields theirs). */
  knex: Knex
  /** Case-sensitive LIKE with `%` and `_` wildcards, the same on every database; `value` is `likeValue(pattern)`. */
  like(column: SqlColumn, value: Knex.Value): Knex.Raw
  /** What a case-sensitive LIKE binds for a pattern (apart from the SQL, so a compiled statement can bind it). */
  likeValue(pattern: string): string
  /** Case-insensitive LIKE; it binds the pattern itself. */
  iLike(column: SqlColumn, pattern: Knex.Value): Knex.Raw
  /**
   * How an `in`/`notIn` list is bound. A list's length must not make a statement of its own: every length
   * would be compiled, kept and (on SQLite) prepared anew.
   */
  list: ListBinding
  /**
   * Where a bound integer is compared with a column: `?`, or PostgreSQL's `?::bigint`. PostgreSQL types an
   * untyped parameter as the column it meets, so 2147483648 against an INTEGER column failed the statement
   * ("out of range") where SQLite and MySQL find no such record; as a BIGINT it compares exactly, and an
   * index on the column still serves (BIGINT and INTEGER share btree operators).
   */
  integer: '?' | '?::bigint'
  /** SUM of a column, in double precision where integers could overflow 64 bits; `integers`: of an integer field. */
  sum(column: SqlColumn, integers: boolean): Knex.Raw
  /** AVG in double precision (the same digits on every database); `integers`: of an integer field. */
  average(column: SqlColumn, integers: boolean): Knex.Raw
  /**
   * True when SUM or AVG of a column overflowed a double, for databases that answer it as a number (MariaDB
   * says 0); where this is missing, the database answers Infinity.
   */
  overflowed?(column: SqlColumn): Knex.Raw
  /** The rows of a SELECT run with `knex.raw`, whose result each driver shapes its own way. */
  rawRows(result: unknown): Array<Record<string, unknown>>
}

/** How a value of a field of this kind is bound where it meets its column: typed for integers (`integer`). */
export function placeholderFor(dialect: Dialect, kind: string): string {
  return kind === 'integer' ? dialect.integer : '?'
}

type Rows = Array<Record<string, unknown>>

export interface ListBinding {
  /** What a list of encoded values binds, in one of a few lengths whatever the list's. */
  bind(members: readonly DbValue[]): DbValue[]
  /** `column IN` (or `NOT IN`) what `bind` made, or stand-ins for it; `integers`: of an integer field. */
  where(
    builder: Knex.QueryBuilder,
    column: SqlColumn,
    bound: Knex.Value[],
    negate: boolean,
    integers?: boolean
  ): Knex.QueryBuilder
}

/** A JSON array as SQLite stores its members: dates as epoch milliseconds, booleans as 1 and 0. */
function jsonList(members: readonly DbValue[]) {
  return JSON.stringify(members.map((member) => (member instanceof Date ? member.getTime() : member)))
}

/**
 * SQLite: the whole list as one JSON array, read by json_each, whatever its length. Measured through the
 * service on 100,000 rows, a page filtered by 10 or by 1,000 ids costs what it did with a placeholder per
 * value (within a shared machine's noise), and the index on the column is still used.
 */
const jsonEachList: ListBinding = {
  bind: (members) => [jsonList(members)],
  where: (builder, column, [list], negate) =>
    builder.whereRaw(`?? ${negate ? 'not in' : 'in'} (select value from json_each(?))`, [column, list])
}

/**
 * MySQL: the members padded by repeating the last one, which changes no answer, to one of 67 lengths up to
 * 1,000. MySQL has no list type, and MariaDB's JSON_TABLE made a page of 1,000 strings 2,000 times slower (a
 * nested loop over the table, measured on 100,000 rows). Padding to powers of two made pages with lists of
 * random lengths twice as slow (MariaDB parses up to twice the values, and joins a list of 1,000 or more as
 * a temporary table); small steps that stop below 1,000 made them a little faster than one shape per length.
 */
/** MariaDB rewrites an IN list of this many values or more into a join with a temporary table. */
const IN_TO_SUBQUERY = 1000

/** The length a list of `length` values is padded to: a power of two up to 16, then a multiple of 16. */
function paddedLength(length: number) {
  if (length <= 16) return length === 0 ? 0 : 2 ** Math.ceil(Math.log2(length))
  const padded = Math.ceil(length / 16) * 16
  return length < IN_TO_SUBQUERY && padded >= IN_TO_SUBQUERY ? IN_TO_SUBQUERY - 1 : padded
}

const paddedList: ListBinding = {
  bind(members) {
    const padded = members.slice()
    const length = paddedLength(members.length)
    while (padded.length < length) padded.push(members[members.length - 1])
    return padded
  },
  // Knex types whereIn for names only; it wraps a Raw (a SQL-computed field) where a name would go.
  where: (builder, column, bound, negate) =>
    negate ? builder.whereNotIn(column as string, bound) : builder.whereIn(column as string, bound)
}

/** A member of a PostgreSQL array literal: quoted, with `"` and `\` escaped; dates as ISO 8601 instants. */
function arrayMember(member: DbValue) {
  if (member === null) return 'NULL'
  const text = member instanceof Date ? member.toISOString() : String(member)
  return `"${text.replace(/["\\]/g, '\\$&')}"`
}

/**
 * PostgreSQL: the whole list as one array literal, which the server reads as an array of the column's type
 * (`= ANY(?)`), whatever its length. Padded lists planned worse there: 32 placeholders for 25 parent ids made
 * the relation page of the GraphQL benchmark a sequential scan (11 ms instead of 0.4 ms).
 */
const arrayList: ListBinding = {
  bind: (members) => [`{${members.map(arrayMember).join(',')}}`],
  where: (builder, column, [list], negate, integers) => {
    const array = integers ? '?::bigint[]' : '?'
    return builder.whereRaw(negate ? `?? <> ALL(${array})` : `?? = ANY(${array})`, [column, list])
  }
}

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
  return {
    name: 'sqlite',
    knex,
    like: (column, value) => knex.raw('?? GLOB ?', [column, value]),
    likeValue: likeToGlob,
    // SQLite's LIKE has no escape character unless told; MySQL's and PostgreSQL's is the backslash.
    iLike: (column, pattern) => knex.raw("LOWER(??) LIKE LOWER(?) ESCAPE '\\'", [column, pattern]),
    list: jsonEachList,
    integer: '?',
    // SUM fails with "integer overflow" past 64 bits; TOTAL adds in double precision, and is 0 for no value.
    sum: (column) => knex.raw('CASE WHEN COUNT(??) > 0 THEN TOTAL(??) END', [column, column]),
    // SQLite's AVG is a double already.
    average: (column) => knex.raw('AVG(??)', [column]),
    rawRows: (result) => result as Rows
  }
}

function mysql(knex: Knex): Dialect {
  return {
    name: 'mysql',
    knex,
    // Case sensitivity follows the column's collation; the example's tables use utf8mb4_bin.
    like: (column, value) => knex.raw('?? LIKE ?', [column, value]),
    likeValue: (pattern) => pattern,
    iLike: (column, pattern) => knex.raw('LOWER(??) LIKE LOWER(?)', [column, pattern]),
    list: paddedList,
    integer: '?',
    // Integers are summed as DECIMAL(65), which cannot overflow.
    sum: (column) => knex.raw('SUM(??)', [column]),
    // MySQL averages integers as a DECIMAL rounded to 4 places; a floating-point zero makes it a double.
    average: (column) => knex.raw('AVG(?? + 0E0)', [column]),
    // A double sum past the largest double is infinite inside MariaDB, which sends it as 0.
    overflowed: (column) =>
      knex.raw('SUM(?? + 0E0) NOT BETWEEN -1.7976931348623157E308 AND 1.7976931348623157E308', [column]),
    // mysql2 answers [rows, fields].
    rawRows: (result) => (result as [Rows, unknown])[0]
  }
}

/**
 * PostgreSQL adds doubles with an error past the largest double, where the others answer a number. Sums are
 * therefore taken of the values scaled by 2^-64, which is exact (powers of two change no rounding) and keeps
 * any realistic sum far from the limit; the scaled sum is scaled back unless it overflowed.
 */
const SCALE = '18446744073709551616::float8'
const SCALED_SUM = `SUM(??::float8 / ${SCALE})`
const SCALED_LIMIT = `1.7976931348623157E308::float8 / ${SCALE}`

function postgres(knex: Knex): Dialect {
  return {
    name: 'postgres',
    knex,
    // LIKE compares text: an integer id is matched as its digits, as SQLite and MySQL do. Case sensitivity
    // follows the column's collation (the example's string columns use "C", code point order).
    like: (column, value) => knex.raw('??::text LIKE ?', [column, value]),
    likeValue: (pattern) => pattern,
    iLike: (column, pattern) => knex.raw('??::text ILIKE ?', [column, pattern]),
    list: arrayList,
    integer: '?::bigint',
    // Integers are summed exactly (BIGINT, or NUMERIC for BIGINT columns), which is far below the largest
    // double, then made a double once: three double operations per row fewer than the scaled sum.
    sum: (column, integers) =>
      integers
        ? knex.raw('SUM(??)::float8', [column])
        : knex.raw(`CASE WHEN ABS(${SCALED_SUM}) <= ${SCALED_LIMIT} THEN ${SCALED_SUM} * ${SCALE} END`, [
            column,
            column
          ]),
    // AVG accumulates squares too, which overflow long before the sum: the scaled sum over the count instead.
    average: (column, integers) =>
      integers
        ? knex.raw('SUM(??)::float8 / COUNT(??)', [column, column])
        : knex.raw(
            `CASE WHEN ABS(${SCALED_SUM}) <= ${SCALED_LIMIT} THEN ${SCALED_SUM} / COUNT(??) * ${SCALE} END`,
            [column, column, column]
          ),
    overflowed: (column) => knex.raw(`ABS(${SCALED_SUM}) > ${SCALED_LIMIT}`, [column]),
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
