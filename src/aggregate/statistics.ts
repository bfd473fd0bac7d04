import type { Knex } from 'knex'
import type { Dialect, SqlColumn } from '../dialect/dialect'
import { isStatistical, type StatisticalFunction } from '../model/aggregate'
import type { AggregateColumn } from './plan-columns'

/**
 * Deviations, variances, the median and percentiles where the database lacks a sound function of its own
 * (SQLite and MariaDB; PostgreSQL has them all), in plain SQL that every driver runs: node-sqlite3 cannot
 * register functions, and MariaDB's variances lose digits. The filtered rows become a derived table with
 * window columns per group (the group's mean, each value's rank and the group's count of values), which the
 * grouping then reads:
 *
 *   variance    SUM((x - mean) * (x - mean)) / COUNT(x)   two passes, so 1e12 ± 1 keeps its digits
 *   percentile  the values ranked floor(p (n - 1)) + 1 and the next, interpolated linearly (percentile_cont)
 */
const MEDIAN = 0.5

/** The window columns of a computed aggregate, named after its alias. */
export const meanAlias = (alias: string) => `${alias}_mean`
export const rankAlias = (alias: string) => `${alias}_rank`
export const countAlias = (alias: string) => `${alias}_n`

/** Whether the column is computed from window columns on this database rather than by its own function. */
export const computedFromWindows = (dialect: Dialect, { fn }: AggregateColumn) =>
  isStatistical(fn) && !dialect.statistics.native[fn]

/** The window columns `column` needs, over the filtered rows partitioned by the group keys. */
export function windowColumns(
  knex: Knex,
  column: AggregateColumn,
  value: SqlColumn,
  keys: Knex.Raw[]
): Knex.Raw[] {
  const over = keys.length ? `PARTITION BY ${keys.map(() => '?').join(', ')}` : ''
  if (column.fn !== 'median' && column.fn !== 'percentile') {
    // `+ 0E0`: MariaDB averages integers as decimals rounded to 4 places.
    return [knex.raw(`AVG(?? + 0E0) OVER (${over}) AS ??`, [value, ...keys, meanAlias(column.alias)])]
  }
  // NULLs ranked last, so that ranks 1 to n are the n values.
  const ordered = `${over} ORDER BY (?? IS NULL), ??`
  return [
    knex.raw(`ROW_NUMBER() OVER (${ordered}) AS ??`, [...keys, value, value, rankAlias(column.alias)]),
    knex.raw(`COUNT(??) OVER (${over}) AS ??`, [value, ...keys, countAlias(column.alias)])
  ]
}

/** The aggregate over the derived table `table`, whose window columns `windowColumns` added. */
export function statisticFromWindows(
  knex: Knex,
  dialect: Dialect,
  table: string,
  column: AggregateColumn,
  value: SqlColumn
): Knex.Raw {
  const fn = column.fn as StatisticalFunction | 'percentile'
  if (fn === 'median') return percentile(knex, dialect, table, column, value, MEDIAN)
  if (fn === 'percentile') return percentile(knex, dialect, table, column, value, column.p!)
  const mean = `${table}.${meanAlias(column.alias)}`
  // `1.0 *`: SQLite divides integers as integers.
  const squares = knex.raw('1.0 * SUM((?? - ??) * (?? - ??))', [value, mean, value, mean])
  const variance =
    fn === 'varPop' || fn === 'stddevPop'
      ? knex.raw('? / COUNT(??)', [squares, value])
      : knex.raw('CASE WHEN COUNT(??) > 1 THEN ? / (COUNT(??) - 1) END', [value, squares, value])
  return fn.startsWith('stddev') ? knex.raw('SQRT(?)', [variance]) : variance
}

/**
 * PostgreSQL's percentile_cont: with n values, the value ranked floor(p (n - 1)) + 1 plus the fraction
 * p (n - 1) - floor(p (n - 1)) of the step to the next one. `+ 0E0` computes in doubles on MariaDB, whose
 * literals are decimals.
 */
function percentile(
  knex: Knex,
  dialect: Dialect,
  table: string,
  column: AggregateColumn,
  value: SqlColumn,
  p: number
) {
  const { floor } = dialect.statistics
  const rank = `${table}.${rankAlias(column.alias)}`
  const n = `${table}.${countAlias(column.alias)}`
  const position = `${p} * (?? - 1)`
  const first = knex.raw(`MAX(CASE WHEN ?? = ${floor(position)} + 1 THEN ?? + 0E0 END)`, [rank, n, value])
  const second = knex.raw(
    `MAX(CASE WHEN ?? = ${floor(position)} + 1 + CASE WHEN ${position} > ${floor(position)} THEN 1 ELSE 0 END ` +
      'THEN ?? + 0E0 END)',
    [rank, n, n, n, value]
  )
  const fraction = knex.raw(`${p} * (COUNT(??) - 1) - ${floor(`${p} * (COUNT(??) - 1)`)}`, [value, value])
  return knex.raw('? + (? - ?) * (?)', [first, second, first, fraction])
}
