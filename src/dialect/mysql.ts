import type { Knex } from 'knex'
import { mysqlUpsert } from './upsert'
import { mysqlGroupIndexes } from './mysql-group-index'
import type { DateBucket } from '../model/aggregate'
import {
  UTC,
  wholeDaysInUtc,
  type DateBuckets,
  type Dialect,
  type ListBinding,
  type Rows,
  type SqlColumn
} from './dialect'

/** MariaDB rewrites an IN list of this many values or more into a join with a temporary table. */
const IN_TO_SUBQUERY = 1000

/** The length a list of `length` values is padded to: a power of two up to 16, then a multiple of 16. */
function paddedLength(length: number) {
  if (length <= 16) return length === 0 ? 0 : 2 ** Math.ceil(Math.log2(length))
  const padded = Math.ceil(length / 16) * 16
  return length < IN_TO_SUBQUERY && padded >= IN_TO_SUBQUERY ? IN_TO_SUBQUERY - 1 : padded
}

/**
 * MySQL: the members padded by repeating the last one, which changes no answer, to one of 67 lengths up to
 * 1,000. MySQL has no list type, and MariaDB plans a JSON_TABLE list as a nested loop over the table.
 * Padding to powers of two is slower (MariaDB parses up to twice the values, and joins a list of 1,000 or
 * more as a temporary table); small steps that stop below 1,000 keep the shapes few at no such cost.
 */
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

/** MariaDB: the local date's first day of each bucket, from the local time `{L}`. */
const LOCAL_START: Record<Exclude<DateBucket, 'HOUR'>, string> = {
  DAY: 'DATE({L})',
  // WEEKDAY() is 0 on Monday, so this is the ISO week's Monday whatever the server's week settings.
  WEEK: 'DATE({L}) - INTERVAL WEEKDAY({L}) DAY',
  MONTH: 'DATE({L}) - INTERVAL (DAYOFMONTH({L}) - 1) DAY',
  QUARTER: 'MAKEDATE(YEAR({L}), 1) + INTERVAL (QUARTER({L}) - 1) QUARTER',
  YEAR: 'MAKEDATE(YEAR({L}), 1)'
}

/** A column as the drivers' `typeCast` option sees it: mysql and mysql2 share this interface. */
interface CastField {
  type: string
  string(): string | null
}

type TypeCast = (field: CastField, next: () => unknown) => unknown

/**
 * The statement's options under which DATE values come back as text: a `typeCast` of its own, which mysql2
 * and mysql both honour per statement (mysql ignores a statement's `dateStrings`). It replaces the
 * connection's, so every other column is cast as the application's connection casts it: DATETIME values
 * (minimums and maximums of date fields) then come back as every read of the application gives them. The
 * text does not depend on the connection's `timezone`, in which both drivers would read a DATE as a Date.
 * None is needed where the connection reads every date as text already, or casts nothing.
 */
function dateAsText(knex: Knex): Record<string, unknown> | undefined {
  const connection = knex.client.config.connection as
    { dateStrings?: unknown; typeCast?: unknown } | null | undefined
  const { dateStrings, typeCast } = typeof connection === 'object' && connection ? connection : {}
  if (dateStrings === true || typeCast === false) return undefined
  const configured = typeof typeCast === 'function' ? (typeCast as TypeCast) : undefined
  const dateAsString: TypeCast = (field, next) => {
    if (field.type === 'DATE') return field.string()
    return configured ? configured(field, next) : next()
  }
  return { typeCast: dateAsString }
}

const KEY_FORMAT = "'%Y-%m-%dT%H:%i:%s'"

/**
 * MariaDB: DATETIME columns hold UTC. CONVERT_TZ gives the local time and back; it needs the server's
 * time-zone tables for zone names (offsets and UTC work without), and answers NULL without them.
 */
function dateBuckets(knex: Knex): DateBuckets {
  const local = (column: SqlColumn, zone: string) =>
    zone === UTC ? knex.raw('??', [column]) : knex.raw("CONVERT_TZ(??, '+00:00', ?)", [column, zone])
  /** `sql` with every `{L}` the local time. */
  const withLocal = (sql: string, column: SqlColumn, zone: string) => {
    const parts = sql.split('{L}')
    return knex.raw(parts.join('?'), Array(parts.length - 1).fill(local(column, zone)))
  }
  return {
    bucket(column, bucket, zone) {
      if (bucket === 'HOUR') {
        // The instant less the minutes, seconds and fraction of its local time: the hour at the offset then
        // in force. (The fraction too: groups are formed by this value, not by its name.)
        return knex.raw(
          '?? - INTERVAL (MINUTE(?) * 60 + SECOND(?)) SECOND - INTERVAL MICROSECOND(??) MICROSECOND',
          [column, local(column, zone), local(column, zone), column]
        )
      }
      const start = withLocal(LOCAL_START[bucket], column, zone)
      if (zone === UTC) return start
      return knex.raw("CONVERT_TZ(?, ?, '+00:00')", [start, zone])
    },
    nameAfterGrouping: (start) => knex.raw(`DATE_FORMAT(??, ${KEY_FORMAT})`, [start]),
    startIsDate: wholeDaysInUtc,
    dateAsText: dateAsText(knex),
    zoneUnknown: (zone) => knex.raw("CONVERT_TZ('2000-01-01 00:00:00', '+00:00', ?) IS NULL", [zone]),
    keyTable: (keys) =>
      knex.raw(
        "(SELECT __fq_key FROM JSON_TABLE(?, '$[*]' COLUMNS (__fq_key VARCHAR(19) CHARACTER SET utf8mb4 PATH '$')) AS __fq_keys)",
        [keys]
      ),
    stepTable: (steps) =>
      knex.raw(
        "(SELECT __fq_key, __fq_previous, __fq_earlier FROM JSON_TABLE(?, '$[*]' COLUMNS (__fq_key VARCHAR(19) CHARACTER SET utf8mb4 PATH '$[0]', __fq_previous VARCHAR(19) CHARACTER SET utf8mb4 PATH '$[1]', __fq_earlier VARCHAR(19) CHARACTER SET utf8mb4 PATH '$[2]')) AS __fq_steps)",
        [steps]
      )
  }
}

export function mysqlDialect(knex: Knex): Dialect {
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
    rawRows: (result) => (result as [Rows, unknown])[0],
    async plannedRows(runner, select) {
      const { sql, bindings } = select.toSQL()
      const [rows] = (await runner.raw(`EXPLAIN FORMAT=JSON ${sql}`, bindings)) as [Rows, unknown]
      return plannedRowsOf(JSON.parse(String(Object.values(rows[0])[0])))
    },
    dateBuckets: dateBuckets(knex),
    // MariaDB's variances lose digits (2.68094 for 2.68095 over 1e12 + 1, 2, 4, 8) and its PERCENTILE_CONT is a
    // window function only: all are computed in plain SQL.
    statistics: {
      native: {},
      floor: (sql) => `FLOOR(${sql})`
    },
    insert: (table, row) => table.insert(row),
    upsert: mysqlUpsert,
    groupIndexes: mysqlGroupIndexes
  }
}

/**
 * The rows MySQL's or MariaDB's JSON plan expects the statement's own table to give: the rows it reads times
 * the share its conditions keep. Relation filters' subqueries are not weighed in: an estimate high by them.
 */
function plannedRowsOf(plan: { query_block?: Record<string, unknown> }) {
  const block = plan.query_block ?? {}
  const nested = block.nested_loop as Array<{ table?: PlannedTable }> | undefined
  const table = (block.table as PlannedTable | undefined) ?? nested?.[0]?.table
  const rows = Number(table?.rows ?? table?.rows_examined_per_scan)
  // MySQL writes `filtered` as a string, MariaDB as a number.
  const kept = Number(table?.filtered ?? 100)
  return Number.isFinite(rows) && Number.isFinite(kept) ? Math.round((rows * kept) / 100) : undefined
}

interface PlannedTable {
  rows?: number | string
  rows_examined_per_scan?: number | string
  filtered?: number | string
}
