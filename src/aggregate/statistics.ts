import type { Knex } from 'knex'
import type { Dialect, SqlColumn } from '../dialect/dialect'
import { isStatistical, type StatisticalFunction } from '../model/aggregate'
import type { ResolvedField } from '../resource/resolved'
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

/** The window columns of a field, named after the field's place among the windowed fields (`windowNames`). */
const meanAlias = (base: string) => `${base}_mean`
const rankAlias = (base: string) => `${base}_rank`
const countAlias = (base: string) => `${base}_n`

/** Whether the column is computed from window columns on this database rather than by its own function. */
export const computedFromWindows = (dialect: Dialect, { fn }: AggregateColumn) =>
  isStatistical(fn) && !dialect.statistics.native[fn]

const ranked = ({ fn }: AggregateColumn) => fn === 'median' || fn === 'percentile'

/**
 * The name each windowed field's columns start with: one set of window columns per field, however many
 * deviations, variances and percentiles of it the request asks (the windows sort and scan the rows).
 */
export function windowNames(windowed: AggregateColumn[]): Map<ResolvedField, string> {
  const names = new Map<ResolvedField, string>()
  for (const { field } of windowed) if (!names.has(field)) names.set(field, `__fq_w${names.size}`)
  return names
}

/** The window columns the `windowed` columns need, over the filtered rows partitioned by the group keys. */
export function windowColumns(
  knex: Knex,
  windowed: AggregateColumn[],
  names: Map<ResolvedField, string>,
  valueOf: (field: ResolvedField) => SqlColumn,
  keys: Knex.Raw[]
): Knex.Raw[] {
  const over = keys.length ? `PARTITION BY ${keys.map(() => '?').join(', ')}` : ''
  const columns: Knex.Raw[] = []
  for (const [field, base] of names) {
    const mine = windowed.filter((column) => column.field === field)
    const value = valueOf(field)
    if (mine.some((column) => !ranked(column))) {
      // `+ 0E0`: MariaDB averages integers as decimals rounded to 4 places.
      columns.push(knex.raw(`AVG(?? + 0E0) OVER (${over}) AS ??`, [value, ...keys, meanAlias(base)]))
    }
    if (mine.some(ranked)) {
      // NULLs ranked last, so that ranks 1 to n are the n values.
      const ordered = `${over} ORDER BY (?? IS NULL), ??`
      columns.push(
        knex.raw(`ROW_NUMBER() OVER (${ordered}) AS ??`, [...keys, value, value, rankAlias(base)]),
        knex.raw(`COUNT(??) OVER (${over}) AS ??`, [value, ...keys, countAlias(base)])
      )
    }
  }
  return columns
}

/**
 * The aggregate over the derived table `table`, whose window columns `windowColumns` added under the name
 * `base` of the column's field.
 */
export function statisticFromWindows(
  knex: Knex,
  dialect: Dialect,
  table: string,
  column: AggregateColumn,
  value: SqlColumn,
  base: string
): Knex.Raw {
  const fn = column.fn as StatisticalFunction | 'percentile'
  if (fn === 'median') return percentile(knex, dialect, table, base, value, MEDIAN)
  if (fn === 'percentile') return percentile(knex, dialect, table, base, value, column.p!)
  const mean = `${table}.${meanAlias(base)}`
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
function percentile(knex: Knex, dialect: Dialect, table: string, base: string, value: SqlColumn, p: number) {
  const { floor } = dialect.statistics
  const rank = `${table}.${rankAlias(base)}`
  const n = `${table}.${countAlias(base)}`
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
