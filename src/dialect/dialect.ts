import type { Knex } from 'knex'
import type { DbValue } from '../resource/codec'
import type { DateBucket, StatisticalFunction } from '../model/aggregate'
import type { UpsertStatement } from './upsert'

/** A column (`table.column`, quoted by knex) or the expression of a SQL-computed field. */
export type SqlColumn = string | Knex.Raw

/** The rows of a SELECT, as the plugin reads them. */
export type Rows = Array<Record<string, unknown>>

/**
 * Everything that differs between SQL databases, in one table per feature; each database's table is a file of
 * its own (`sqlite.ts`, `mysql.ts`, `postgres.ts`). The rest of the compiler is dialect-free knex.
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
  /** Deviations, variances and the median (see `aggregate/statistics.ts`). */
  statistics: StatisticsSql
  /**
   * The planner's estimate of how many rows `select` reads, without running it (`countStrategy`); missing
   * where the database keeps no such estimate (SQLite); undefined when the plan does not say.
   */
  plannedRows?(knex: Knex, select: Knex.QueryBuilder): Promise<number | undefined>
  /** The rows of a SELECT run with `knex.raw`, whose result each driver shapes its own way. */
  rawRows(result: unknown): Rows
  /** Date buckets of aggregates. */
  dateBuckets: DateBuckets
  /** An INSERT of one row that answers the new row's id (`[id]`, or `[{ [idColumn]: id }]`). */
  insert(table: Knex.QueryBuilder, row: Record<string, unknown>, idColumn: string): Knex.QueryBuilder
  /** An upsert of one row, race-free, within a transaction (see `upsert.ts`). */
  upsert: UpsertStatement
  /** Where the database may group by reading an index in order, the choice of whether to let it. */
  groupIndexes?: GroupIndexes
}

/**
 * The statistical aggregates a database computes itself, in double precision, where its function is
 * numerically sound (a one-pass update, never the cancelling sum of squares); the others the plugin computes
 * in plain SQL from window columns over the filtered rows, the same SQL on every database.
 */
export interface StatisticsSql {
  /** `p`: the percentile's (the median's is 0.5), a checked number from 0 to 1, written into the SQL. */
  native: Partial<Record<StatisticalFunction | 'percentile', (column: SqlColumn, p: number) => Knex.Raw>>
  /** SQL of the largest integer not above a non-negative number `sql` (SQLite's FLOOR needs its math functions). */
  floor(sql: string): string
}

/** Whether a grouping may read an index in key order (see `mysql-group-index.ts`). */
export interface GroupIndexes {
  /** Reads the table's indexes, so that no request waits for them. */
  preload(knex: Knex, table: string): Promise<void>
  /** Whether the grouped read should leave the table's indexes out of its grouping. */
  shouldIgnore(knex: Knex, read: GroupedRead): Promise<boolean>
  /** The table, its indexes left out of the grouping. */
  tableWithout(knex: Knex, table: string): Knex.QueryBuilder
}

export interface GroupedRead {
  table: string
  /** Columns grouped by, in order (bucketed date columns left out: an expression is never read in index order). */
  groupColumns: string[]
  /** Every other column the statement reads. */
  readColumns: string[]
  /** Columns every InnoDB index holds: the primary key's. */
  primaryKey: string[]
}

/** How a value of a field of this kind is bound where it meets its column: typed for integers (`integer`). */
export function placeholderFor(dialect: Dialect, kind: string): string {
  return kind === 'integer' ? dialect.integer : '?'
}

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

/**
 * The time zone every database computes date buckets in with its own date functions, without time-zone data.
 * Aggregate plans name it so in any spelling.
 */
export const UTC = 'UTC'

/**
 * Date buckets: SQL for the start of the bucket holding a date column's value in a time zone's calendar, as
 * `YYYY-MM-DDTHH:MM:SS` in UTC, the same on every database (see `aggregate/time-zone.ts` for what a bucket
 * is; the tests hold each database to it). UTC buckets use each database's own date functions.
 */
export interface DateBuckets {
  /** The bucket's name (`YYYY-MM-DDTHH:MM:SS`, UTC), or with `nameAfterGrouping` its start as a date. */
  bucket(column: SqlColumn, bucket: DateBucket, zone: string): Knex.Raw
  /**
   * Turns a grouped bucket start into its name. Databases group by their own date values far faster than
   * by formatted strings, so the statement groups by the start and names each group once, after grouping.
   */
  nameAfterGrouping?(start: string, bucket: DateBucket, zone: string): Knex.Raw
  /**
   * Whether the bucket's start comes back as a date, `YYYY-MM-DD` (whole days in UTC), which decoding names
   * for nothing: naming dates in SQL is a large part of a grouping's cost on MariaDB (any conversion to
   * text), and so is the derived table holding the names.
   */
  startIsDate?(bucket: DateBucket, zone: string): boolean
  /** The statement's options under which the driver answers such a start as text, not as a Date. */
  dateAsText?: Record<string, unknown>
  /**
   * True when the database cannot convert to `zone` (MariaDB without its time-zone tables), selected with
   * the groups so that no second statement is needed to tell.
   */
  zoneUnknown?(zone: string): Knex.Raw
  /** The bucket names of a JSON array as a table of one column, `__fq_key`. */
  keyTable(keys: string): Knex.Raw
  /**
   * The compared buckets of a JSON array of `[name, previous, earlier]` triples as a table of the columns
   * `__fq_key`, `__fq_previous` and `__fq_earlier` (null when no period is compared).
   */
  stepTable(steps: string): Knex.Raw
  /** Whether buckets in zones other than UTC need the plugin's SQLite function on the connection. */
  needsFunction?: boolean
}

/** Buckets of whole days in UTC, whose starts SQLite's date() and MariaDB's DATE arithmetic give as dates. */
export const wholeDaysInUtc = (bucket: DateBucket, zone: string) => zone === UTC && bucket !== 'HOUR'
