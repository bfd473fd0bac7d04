import type { Knex } from 'knex'
import { postgresUpsert } from './upsert'
import type { DbValue } from '../resource/codec'
import type { DateBucket } from '../model/aggregate'
import { UTC, type DateBuckets, type Dialect, type ListBinding, type Rows } from './dialect'

/** A member of a PostgreSQL array literal: quoted, with `"` and `\` escaped; dates as ISO 8601 instants. */
function arrayMember(member: DbValue) {
  if (member === null) return 'NULL'
  const text = member instanceof Date ? member.toISOString() : String(member)
  return `"${text.replace(/["\\]/g, '\\$&')}"`
}

/**
 * PostgreSQL: the whole list as one array literal, which the server reads as an array of the column's type
 * (`= ANY(?)`), whatever its length. Padded lists plan worse there: a padded list of parent ids can turn a
 * relation page into a sequential scan.
 */
const arrayList: ListBinding = {
  bind: (members) => [`{${members.map(arrayMember).join(',')}}`],
  where: (builder, column, [list], negate, integers) => {
    const array = integers ? '?::bigint[]' : '?'
    return builder.whereRaw(negate ? `?? <> ALL(${array})` : `?? = ANY(${array})`, [column, list])
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

const UNITS: Record<DateBucket, string> = {
  HOUR: 'hour',
  DAY: 'day',
  WEEK: 'week',
  MONTH: 'month',
  QUARTER: 'quarter',
  YEAR: 'year'
}

const KEY_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS'`

/** PostgreSQL: timestamptz columns; `AT TIME ZONE` gives the local time and back, date_trunc weeks start Monday. */
function dateBuckets(knex: Knex): DateBuckets {
  return {
    bucket(column, bucket, zone) {
      const unit = UNITS[bucket]
      if (zone === UTC) return knex.raw(`date_trunc('${unit}', ?? AT TIME ZONE 'UTC')`, [column])
      if (bucket === 'HOUR') {
        // The instant less the minutes and seconds of its local time: the hour at the offset then in force.
        return knex.raw(
          `(?? - (?? AT TIME ZONE ? - date_trunc('hour', ?? AT TIME ZONE ?))) AT TIME ZONE 'UTC'`,
          [column, column, zone, column, zone]
        )
      }
      return knex.raw(`date_trunc('${unit}', ?? AT TIME ZONE ?) AT TIME ZONE ? AT TIME ZONE 'UTC'`, [
        column,
        zone,
        zone
      ])
    },
    nameAfterGrouping: (start) => knex.raw(`to_char(??, ${KEY_FORMAT})`, [start]),
    keyTable: (keys) => knex.raw('(SELECT value AS __fq_key FROM json_array_elements_text(?::json))', [keys]),
    stepTable: (steps) =>
      knex.raw(
        '(SELECT value->>0 AS __fq_key, value->>1 AS __fq_previous, value->>2 AS __fq_earlier FROM json_array_elements(?::json))',
        [steps]
      )
  }
}

export function postgresDialect(knex: Knex): Dialect {
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
    rawRows: (result) => (result as { rows: Rows }).rows,
    async plannedRows(runner, select) {
      const { sql, bindings } = select.toSQL()
      const result = await runner.raw(`EXPLAIN (FORMAT JSON) ${sql}`, bindings)
      const [row] = (result as { rows: Array<Record<string, unknown>> }).rows
      const [plan] = row['QUERY PLAN'] as Array<{ Plan: { 'Plan Rows': number } }>
      return Math.round(plan.Plan['Plan Rows'])
    },
    dateBuckets: dateBuckets(knex),
    // Youngs-Cramer updates for float8 variances; percentile_cont is the definition of the median we answer.
    statistics: {
      native: {
        stddevPop: (column) => knex.raw('STDDEV_POP(??::float8)', [column]),
        stddevSamp: (column) => knex.raw('STDDEV_SAMP(??::float8)', [column]),
        varPop: (column) => knex.raw('VAR_POP(??::float8)', [column]),
        varSamp: (column) => knex.raw('VAR_SAMP(??::float8)', [column]),
        median: (column) => knex.raw('PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY ??::float8)', [column]),
        percentile: (column, p) =>
          knex.raw(`PERCENTILE_CONT(${p}) WITHIN GROUP (ORDER BY ??::float8)`, [column])
      },
      floor: (sql) => `FLOOR(${sql})`
    },
    // Without RETURNING, PostgreSQL answers an INSERT with no id.
    insert: (table, row, idColumn) => table.insert(row, [idColumn]),
    upsert: postgresUpsert
  }
}
