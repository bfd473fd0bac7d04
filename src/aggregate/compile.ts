import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { UTC, type DateBuckets, type SqlColumn } from '../dialect/dialect'
import { qualified, type SqlTarget } from '../query/sql-target'
import { parseFilter } from '../query/parse-filter'
import { applyParsedFilter } from '../query/compile-filter'
import type { QueryLimits } from '../resource/query-limits'
import type { ResolvedField } from '../resource/resolved'
import {
  isCounting,
  isStatistical,
  type AggregatePage,
  type AggregateResponse,
  type PartitionedAggregates
} from '../model/aggregate'
import {
  decodePage,
  decodePartitions,
  decodeResponses,
  overflowAlias,
  ZONE_UNKNOWN,
  ROW,
  TOTAL,
  type Rows
} from './decode'
import { groupKeys, type AggregatePlan } from './plan'
import type { AggregateColumn, GroupColumn } from './plan-columns'
import { seriesRows } from './series-sql'
import { computedFromWindows, statisticFromWindows, windowColumns, windowNames } from './statistics'

const FUNCTION_SQL: Record<'count' | 'countDistinct' | 'min' | 'max', string> = {
  count: 'COUNT(??)',
  countDistinct: 'COUNT(DISTINCT ??)',
  min: 'MIN(??)',
  max: 'MAX(??)'
}

/** The aggregated rows (one per group), as the outer query reads them. */
const GROUPS = '__fq_groups'
/** With fill: the groups that have records, joined to the series of buckets. */
const GROUPED = '__fq_grouped'
/** Grouped by the buckets' starts, before they are named. */
const BUCKETED = '__fq_bucketed'
const SERIES = '__fq_series'
const RANKED = '__fq_ranked'
/** With compared buckets: the named grouped rows, read once per bucket and again per compared bucket. */
const BUCKETS = '__fq_buckets'

function aggregateExpression(
  knex: Knex,
  target: SqlTarget,
  aggregate: AggregateColumn,
  column: SqlColumn,
  windows: Map<ResolvedField, string>
): Knex.Raw {
  const { fn, field } = aggregate
  const integers = field.kind === 'integer'
  if (isStatistical(fn)) {
    const native = target.dialect.statistics.native[fn]
    return native
      ? native(column, aggregate.p ?? 0.5)
      : statisticFromWindows(knex, target.dialect, target.table, aggregate, column, windows.get(field)!)
  }
  // Sums and averages differ per database (see the dialect table); the rest is standard SQL.
  if (fn === 'sum') return target.dialect.sum(column, integers)
  if (fn === 'avg') return target.dialect.average(column, integers)
  return knex.raw(FUNCTION_SQL[fn], [column])
}

/**
 * Whether an aggregate's column comes with an overflow flag: a sum or average of doubles, on databases that
 * answer an overflowed double as a number. Integers cannot overflow one: a sum of 64-bit integers stays below
 * 2^63 times the number of rows, far from the largest double.
 */
const flagsOverflow = (target: SqlTarget, { fn, field }: AggregateColumn) =>
  target.dialect.overflowed !== undefined && (fn === 'sum' || fn === 'avg') && field.kind !== 'integer'

export function groupExpression(
  knex: Knex,
  target: SqlTarget,
  buckets: DateBuckets,
  group: GroupColumn
): Knex.Raw {
  const column = group.column ?? qualified(target, group.field)
  return group.bucket ? buckets.bucket(column, group.bucket, group.zone ?? UTC) : knex.raw('??', [column])
}

/**
 * The innermost SELECT: the partition key and the group keys, then one aggregate per function and field,
 * grouped by the keys' aliases (expressions with bound values, such as a time zone, would not match their
 * own copy in GROUP BY on PostgreSQL).
 */
function groupedRows(
  knex: Knex,
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  buckets: DateBuckets,
  plan: AggregatePlan
) {
  const windowed = plan.aggregates.filter((aggregate) => computedFromWindows(target.dialect, aggregate))
  const windows = windowNames(windowed)
  if (windowed.length) builder = withWindowColumns(knex, builder, target, buckets, plan, windowed, windows)
  for (const group of groupKeys(plan)) {
    const key = windowed.length
      ? knex.raw('??', [`${target.table}.${group.alias}`])
      : groupExpression(knex, target, buckets, group)
    builder.select(knex.raw('? AS ??', [key, group.alias])).groupBy(group.alias)
  }
  for (const aggregate of plan.aggregates) {
    const { field, alias } = aggregate
    const column = qualified(target, field)
    builder.select(
      knex.raw('? AS ??', [aggregateExpression(knex, target, aggregate, column, windows), alias])
    )
    if (flagsOverflow(target, aggregate)) {
      builder.select(knex.raw('? AS ??', [target.dialect.overflowed!(column), overflowAlias(alias)]))
    }
  }
  return builder
}

/**
 * The filtered rows as a derived table under the table's own name (so that qualified columns still read it):
 * every column, the group keys computed once, and the window columns of the statistics computed from them
 * (see `statistics.ts`).
 */
function withWindowColumns(
  knex: Knex,
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  buckets: DateBuckets,
  plan: AggregatePlan,
  windowed: AggregateColumn[],
  windows: Map<ResolvedField, string>
) {
  const keys = groupKeys(plan).map((group) => groupExpression(knex, target, buckets, group))
  builder.select(`${target.table}.*`)
  groupKeys(plan).forEach((group, index) => builder.select(knex.raw('? AS ??', [keys[index], group.alias])))
  builder.select(windowColumns(knex, windowed, windows, (field) => qualified(target, field), keys))
  return knex.from(builder.as(target.table))
}

/**
 * Whether a group's bucket start reaches decoding as a date (`YYYY-MM-DD`), which names it there. Not with a
 * fill or compared buckets: the groups are joined to names, so they are named in SQL first.
 */
const startIsDate = (buckets: DateBuckets, plan: AggregatePlan, group: GroupColumn) =>
  group.bucket !== undefined &&
  !plan.fill &&
  !plan.series?.steps &&
  buckets.startIsDate?.(group.bucket, group.zone ?? UTC) === true

/** Whether a group's bucket is named in SQL after grouping (the database groups by the bucket's start). */
const namedInSql = (buckets: DateBuckets, plan: AggregatePlan, group: GroupColumn) =>
  group.bucket !== undefined && buckets.nameAfterGrouping !== undefined && !startIsDate(buckets, plan, group)

/** The grouped rows with the buckets that need it named (see `namedInSql`). */
function namedBuckets(
  knex: Knex,
  grouped: Knex.QueryBuilder,
  target: SqlTarget,
  buckets: DateBuckets,
  plan: AggregatePlan
) {
  const columns = groupKeys(plan).map((group) => {
    const column = `${BUCKETED}.${group.alias}`
    if (!namedInSql(buckets, plan, group)) return knex.raw('??', [column])
    const name = buckets.nameAfterGrouping!(column, group.bucket!, group.zone ?? UTC)
    return knex.raw('? AS ??', [name, group.alias])
  })
  for (const aggregate of plan.aggregates) {
    const { alias } = aggregate
    columns.push(knex.raw('??', [`${BUCKETED}.${alias}`]))
    if (flagsOverflow(target, aggregate))
      columns.push(knex.raw('??', [`${BUCKETED}.${overflowAlias(alias)}`]))
  }
  return knex.select(columns).from(grouped.as(BUCKETED))
}

/** With fill: every bucket of the series, its groups' aggregates where it has records, counts of 0 elsewhere. */
function filledRows(
  knex: Knex,
  grouped: Knex.QueryBuilder,
  target: SqlTarget,
  buckets: DateBuckets,
  plan: AggregatePlan
) {
  const { group, keys } = plan.fill!
  const key = `${SERIES}.__fq_key`
  const columns = [knex.raw('?? AS ??', [key, group.alias])]
  for (const aggregate of plan.aggregates) {
    const { fn, alias } = aggregate
    columns.push(
      knex.raw(isCounting(fn) ? 'COALESCE(??, 0) AS ??' : '?? AS ??', [`${GROUPED}.${alias}`, alias])
    )
    if (flagsOverflow(target, aggregate)) {
      columns.push(knex.raw('?? AS ??', [`${GROUPED}.${overflowAlias(alias)}`, overflowAlias(alias)]))
    }
  }
  return knex
    .select(columns)
    .from(knex.raw('? AS ??', [buckets.keyTable(JSON.stringify(keys)), SERIES]))
    .leftJoin(grouped.as(GROUPED), `${GROUPED}.${group.alias}`, key)
}

/**
 * ORDER BY over the aggregated rows, NULL placement explicit (MySQL has no NULLS FIRST); the columns of
 * `table`, or without one the grouped statement's own aliases.
 */
function groupOrderSql(plan: AggregatePlan, table?: string) {
  const sql: string[] = []
  const bindings: string[] = []
  for (const term of plan.order) {
    const column = table ? `${table}.${term.alias}` : term.alias
    if (term.nullable) {
      sql.push(`(?? IS NULL) ${term.nullsFirst ? 'DESC' : 'ASC'}`)
      bindings.push(column)
    }
    sql.push(`?? ${term.direction}`)
    bindings.push(column)
  }
  return { sql: sql.join(', '), bindings }
}

/** Whether the plan's statement needs the plugin's SQLite functions on its connection (see `sqlite-functions.ts`). */
export function needsSqliteFunctions(target: SqlTarget, plan: AggregatePlan) {
  return plan.zones.length > 0 && target.dialect.dateBuckets.needsFunction === true
}

/**
 * The 400 of a request that groups into more than `maxGroups` rows without paging. The statement reads one
 * row past the limit, so a grouping by the id of a million records costs `maxGroups + 1` rows, not a million.
 */
export function tooManyGroups(plan: AggregatePlan) {
  const what = plan.partition ? 'groups of all the parents together' : 'groups'
  return badField(
    'groupBy',
    `gives more than ${plan.maxGroups} ${what}; filter the records, group by fewer or coarser fields, or page the groups`
  )
}

/** Relation pages and counted pages number their rows (and count them) over the aggregated rows. */
const numbersRows = (plan: AggregatePlan) =>
  plan.paging !== undefined && (plan.partition !== undefined || plan.totalCount === true)

/**
 * Whether the grouped SELECT can order and cut its own rows: without having, fill, buckets named in SQL or
 * numbered rows, and when its order is by bare aliases. Every database takes those; an alias inside an
 * expression, as `(alias IS NULL) DESC` places a nullable term's NULLs, PostgreSQL refuses, and MariaDB for
 * an aggregate's alias. The derived table it saves costs MariaDB a copy of the grouped rows and a second
 * sort.
 */
const ordersItself = (plan: AggregatePlan, named: boolean) =>
  !named &&
  !plan.fill &&
  !plan.series &&
  !plan.having &&
  !numbersRows(plan) &&
  plan.order.every((term) => !term.nullable)

/**
 * Turns a planned aggregate into one statement over `builder` (which already holds the WHERE clause: scope,
 * filter, soft delete); `decodeAggregateRows` reads its rows:
 *
 *   SELECT * FROM (SELECT keys, aggregates FROM table WHERE ... GROUP BY keys) AS __fq_groups
 *   WHERE <having> ORDER BY <sorting>, <keys> LIMIT <page + 1 | maxGroups + 1> OFFSET <offset>
 *
 * With fill the grouped rows are joined to the series of buckets first. Relation pages and counted pages
 * number the rows with ROW_NUMBER() (per parent) and count them with COUNT(*) OVER (), and keep the page's
 * rows (and the first row, which carries the count even when the page is past the end). Without any of
 * those the grouped SELECT is mostly ordered and cut itself (`ordersItself`). Running values and compared
 * buckets (`series-sql.ts`) are windowed and joined over the grouped (filled) rows before HAVING and the page,
 * the grouped rows then written once as `WITH __fq_buckets AS (...)`.
 */
export function compileAggregate(
  knex: Knex,
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  plan: AggregatePlan,
  limits: Readonly<Required<QueryLimits>>
): Knex.QueryBuilder {
  const buckets = target.dialect.dateBuckets
  const grouped = groupedRows(knex, builder, target, buckets, plan)
  const keys = groupKeys(plan)
  const named = keys.some((group) => namedInSql(buckets, plan, group))
  let query: Knex.QueryBuilder
  if (ordersItself(plan, named)) {
    query = orderedPage(grouped, plan)
  } else {
    const bucketRows = named ? namedBuckets(knex, grouped, target, buckets, plan) : grouped
    // Compared buckets read the grouped rows up to three times: once written, as a common table.
    const compared = plan.series?.steps !== undefined
    let source = compared ? knex.select('*').from(BUCKETS) : bucketRows
    if (plan.fill) source = filledRows(knex, source, target, buckets, plan)
    if (plan.series) {
      const flags = (column: AggregateColumn) => flagsOverflow(target, column)
      source = seriesRows(knex, source, target, plan, compared ? BUCKETS : undefined, flags)
    }
    query = fromGroups(knex, source, plan, target, limits)
    if (compared) query.with(BUCKETS, bucketRows)
  }
  plan.zones.forEach((zone, index) => {
    if (buckets.zoneUnknown)
      query.select(knex.raw('? AS ??', [buckets.zoneUnknown(zone), `${ZONE_UNKNOWN}${index}`]))
  })
  const { dateAsText } = buckets
  if (dateAsText && keys.some((group) => startIsDate(buckets, plan, group))) query.options(dateAsText)
  return query
}

/** The rows in the requested order, cut at the page or one past the cap on groups. */
function orderedPage(rows: Knex.QueryBuilder, plan: AggregatePlan, table?: string) {
  const { paging, partition } = plan
  if (partition) rows.orderBy(table ? `${table}.${partition.alias}` : partition.alias)
  const order = groupOrderSql(plan, table)
  if (order.sql) rows.orderByRaw(order.sql, order.bindings)
  // The cap without paging is the resource's own, so it is written into the statement rather than bound: a
  // statement that binds nothing goes to PostgreSQL as one simple query instead of parse, bind, describe
  // and execute messages, each parsed back by the driver.
  const query = paging ? rows.limit(paging.limit + 1) : rows.limit(plan.maxGroups + 1, { skipBinding: true })
  if (paging?.offset) query.offset(paging.offset)
  return query
}

/** The statement over the aggregated rows as a derived table: with having, and with numbered rows. */
function fromGroups(
  knex: Knex,
  source: Knex.QueryBuilder,
  plan: AggregatePlan,
  target: SqlTarget,
  limits: Readonly<Required<QueryLimits>>
) {
  const rows = knex.select(`${GROUPS}.*`).from(source.as(GROUPS))
  if (plan.having) {
    const having = { resource: plan.having.resource, dialect: target.dialect, table: GROUPS }
    applyParsedFilter(rows, having, parseFilter(having, plan.having.filter, limits))
  }
  if (!numbersRows(plan)) return orderedPage(rows, plan, GROUPS)
  const { paging, partition } = plan
  const order = groupOrderSql(plan, GROUPS)
  const over = partition ? 'PARTITION BY ??' : ''
  const overBindings = partition ? [`${GROUPS}.${partition.alias}`] : []
  const ordered = order.sql ? ` ORDER BY ${order.sql}` : ''
  rows.select(
    knex.raw(`ROW_NUMBER() OVER (${over}${ordered}) AS ??`, [...overBindings, ...order.bindings, ROW]),
    knex.raw(`COUNT(*) OVER (${over}) AS ??`, [...overBindings, TOTAL])
  )
  const { limit, offset } = paging!
  const query = knex
    .select(`${RANKED}.*`)
    .from(rows.as(RANKED))
    .where((window) => {
      window.where((page) =>
        page.where(`${RANKED}.${ROW}`, '>', offset).andWhere(`${RANKED}.${ROW}`, '<=', offset + limit + 1)
      )
      if (plan.totalCount) window.orWhere(`${RANKED}.${ROW}`, 1)
    })
  if (partition) query.orderBy(`${RANKED}.${partition.alias}`)
  return query.orderBy(`${RANKED}.${ROW}`)
}

/** Whether an unpaged plan's statement found more groups than it may answer (it reads one past the cap). */
export const exceedsGroups = (plan: AggregatePlan, result: Rows) =>
  !plan.paging && result.length > plan.maxGroups

/** The answer to `plan` from the rows of its statement (compiled for `plan` or for one of the same shape). */
export function decodeAggregateRows(
  plan: AggregatePlan,
  result: Rows
): AggregateResponse[] | AggregatePage | PartitionedAggregates {
  const { paging, partition } = plan
  if (paging) return partition ? decodePartitions(plan, result) : decodePage(plan, result)
  if (exceedsGroups(plan, result)) throw tooManyGroups(plan)
  return partition ? decodePartitions(plan, result) : decodeResponses(plan, result)
}
