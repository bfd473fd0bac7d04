import type { Knex } from 'knex'
import type { SqlTarget } from '../query/sql-target'
import { isCounting } from '../model/aggregate'
import { overflowAlias } from './decode'
import { groupKeys, type AggregatePlan } from './plan'
import type { AggregateColumn, GroupColumn } from './plan-columns'
import { earlierAlias, previousAlias, runningAlias, stepAlias } from './series'

const CURRENT = '__fq_current'
const STEPS = '__fq_steps'
const PREVIOUS = '__fq_previous_bucket'
const EARLIER = '__fq_earlier_bucket'

/** Whether a column comes with an overflow flag (see `flagsOverflow` in `compile.ts`). */
type FlagsOverflow = (column: AggregateColumn) => boolean

/**
 * `SUM(x) OVER (PARTITION BY <other keys>, <bucket is null> ORDER BY <bucket> ROWS BETWEEN UNBOUNDED PRECEDING
 * AND CURRENT ROW)`: a running count is the sum of the buckets' counts; sums, minimums and maximums run as
 * themselves. The bucket's name or start orders the buckets in calendar order on every database. The records
 * without a date (a null own date, a missing or unreadable related record) have no place in the calendar: SQLite
 * and MariaDB sort NULL first, PostgreSQL last, so they get a partition of their own and no running values
 * (`decode.ts` answers null for them).
 */
function runningColumns(
  knex: Knex,
  query: Knex.QueryBuilder,
  plan: AggregatePlan,
  others: GroupColumn[],
  flagsOverflow: FlagsOverflow
) {
  const series = plan.series!
  const bucket = `${CURRENT}.${series.group.alias}`
  const partition = others.map((group) => `${CURRENT}.${group.alias}`)
  const over =
    `OVER (PARTITION BY ${partition.map(() => '??, ').join('')}CASE WHEN ?? IS NULL THEN 1 ELSE 0 END ` +
    'ORDER BY ?? ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)'
  const window = (fn: string, column: string, alias: string) =>
    knex.raw(`${fn} ${over} AS ??`, [column, ...partition, bucket, bucket, alias])
  for (const column of series.running) {
    const fn = column.fn === 'count' ? 'SUM' : column.fn.toUpperCase()
    query.select(window(`${fn}(??)`, `${CURRENT}.${column.alias}`, runningAlias(column.alias)))
    if (flagsOverflow(column)) {
      // Overflowed so far: the flag is a boolean on PostgreSQL, which has no MAX of booleans.
      const flag = `${CURRENT}.${overflowAlias(column.alias)}`
      query.select(
        window('MAX(CASE WHEN ?? THEN 1 ELSE 0 END)', flag, overflowAlias(runningAlias(column.alias)))
      )
    }
  }
}

/**
 * The aggregates of the bucket a step names (`__fq_previous` or `__fq_earlier`) in the same group: the
 * grouped rows joined again, by name and by the other keys (NULL matching NULL); none found counts 0. The step's
 * name is answered too: none (a bucket outside the range, whose records were not read) makes the member null.
 */
function comparedColumns(
  knex: Knex,
  query: Knex.QueryBuilder,
  buckets: string,
  [table, step]: [string, string],
  columns: AggregateColumn[],
  aliasOf: (alias: string) => string,
  {
    group,
    others,
    flagsOverflow
  }: { group: GroupColumn; others: GroupColumn[]; flagsOverflow: FlagsOverflow }
) {
  if (!columns.length) return
  query.select(knex.raw('?? AS ??', [`${STEPS}.${step}`, stepAlias(step)]))
  query.leftJoin(`${buckets} as ${table}`, function () {
    this.on(`${table}.${group.alias}`, '=', `${STEPS}.${step}`)
    for (const other of others) {
      const [mine, theirs] = [`${CURRENT}.${other.alias}`, `${table}.${other.alias}`]
      this.andOn(knex.raw('(?? = ?? OR (?? IS NULL AND ?? IS NULL))', [mine, theirs, mine, theirs]))
    }
  })
  for (const column of columns) {
    const value = `${table}.${column.alias}`
    const alias = aliasOf(column.alias)
    query.select(knex.raw(isCounting(column.fn) ? 'COALESCE(??, 0) AS ??' : '?? AS ??', [value, alias]))
    if (flagsOverflow(column)) {
      query.select(knex.raw('?? AS ??', [`${table}.${overflowAlias(column.alias)}`, overflowAlias(alias)]))
    }
  }
}

/**
 * The rows of each bucket (`current`: grouped, maybe filled) with their running values and, when the plan
 * compares buckets, the aggregates of the previous and the period-earlier bucket, read from `buckets` (the
 * statement's named grouped rows) through the table of steps the plan computed. HAVING, the order and the
 * page apply after this, so running values are those of the whole series.
 */
export function seriesRows(
  knex: Knex,
  current: Knex.QueryBuilder,
  target: SqlTarget,
  plan: AggregatePlan,
  buckets: string | undefined,
  flagsOverflow: FlagsOverflow
) {
  const series = plan.series!
  const others = groupKeys(plan).filter((group) => group !== series.group)
  const query = knex.select(`${CURRENT}.*`).from(current.as(CURRENT))
  runningColumns(knex, query, plan, others, flagsOverflow)
  if (!series.steps || !buckets) return query
  const steps = target.dialect.dateBuckets.stepTable(JSON.stringify(series.steps))
  query.leftJoin(knex.raw('? AS ??', [steps, STEPS]), `${STEPS}.__fq_key`, `${CURRENT}.${series.group.alias}`)
  const context = { group: series.group, others, flagsOverflow }
  comparedColumns(knex, query, buckets, [PREVIOUS, '__fq_previous'], series.previous, previousAlias, context)
  if (series.period) {
    comparedColumns(knex, query, buckets, [EARLIER, '__fq_earlier'], series.periodAgo, earlierAlias, context)
  }
  return query
}
