import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { runQuery } from '../dialect/database-errors'
import { violationOf } from '../dialect/constraint-violations'
import type { GroupIndexes } from '../dialect/dialect'
import type { Filter } from '../model/query'
import type { AggregateRequest } from '../model/aggregate'
import type { ResourceParams } from '../model/records'
import { qualified, storedColumn } from '../query/sql-target'
import { applyRelationJoins, joinedTarget, relationJoins } from '../query/relation-joins'
import type { Link } from '../query/read-statements'
import type { Rows } from '../dialect/dialect'
import {
  compileAggregate,
  decodeAggregateRows,
  exceedsGroups,
  needsSqliteFunctions
} from '../aggregate/compile'
import { checkGroupProbe, compileGroupProbe, probesGroups } from '../aggregate/group-probe'
import { groupKeys, PARTITION_ALIAS, planAggregate, type AggregatePlan } from '../aggregate/plan'
import { withSqliteFunctions } from '../aggregate/sqlite-functions'
import type { ResourceStore } from './store'
import type { CallerAccess } from '../authorization/field-rules'

/**
 * The aggregate rows of a scoped call: planned, compiled into one statement over the records it may see
 * (through `link`'s links for a many-to-many relation, partitioned per parent) and decoded.
 */
export async function aggregateRecords(
  store: ResourceStore,
  request: AggregateRequest,
  params: ResourceParams,
  filter: Filter | undefined,
  link: Link | undefined,
  access?: CallerAccess
) {
  const { resource, target } = store
  const { maxAggregateGroups: maxGroups, maxFillBuckets } = resource
  const { maxRelationDepth } = store.limits
  const plan = planAggregate(resource, request, {
    maxGroups,
    maxFillBuckets,
    filter,
    maxRelationDepth,
    access
  })
  // Partitioned by the links' key when a many-to-many relation's records are aggregated per parent.
  if (link) {
    plan.partition = {
      name: link.foreignKey.name,
      field: link.foreignKey,
      column: storedColumn(link.target, link.foreignKey),
      alias: PARTITION_ALIAS
    }
  }
  // Group keys of related records: their relations LEFT JOINed, each within what the caller may read of it.
  const joins = relationJoins(
    target,
    plan.groups.map((group) => group.relations ?? [])
  )
  if (joins.length > store.limits.maxRelationFilters) {
    const most = store.limits.maxRelationFilters
    throw badField('groupBy', `joins at most ${most} relations (limits.maxRelationFilters)`)
  }
  for (const group of plan.groups) {
    if (group.relations) group.column = qualified(joinedTarget(target, joins, group.relations), group.field)
  }
  const knex = store.knex(params)
  const { groupIndexes } = target.dialect
  const withoutGroupIndexes =
    !link && !joins.length && !!groupIndexes && (await ignoresGroupIndexes(store, plan, groupIndexes))
  const [visible, scopes] = await Promise.all([
    store.visible(params, filter, link),
    store.joinScopes(
      params,
      joins.map((join) => join.target.resource)
    )
  ])
  const values = scopes.values.length ? [...visible.values, ...scopes.values] : visible.values
  const joined = (table: Knex.QueryBuilder, bound: readonly unknown[]) =>
    joins.length ? applyRelationJoins(knex, table, joins, scopes, bound, visible.values.length) : table
  const compile = (bound: readonly unknown[]) => {
    const table = withoutGroupIndexes
      ? groupIndexes!.tableWithout(knex, resource.table)
      : knex(resource.table)
    const builder = store.statements.whereVisible(
      joined(link ? store.statements.joinLink(table, link) : table, bound),
      visible,
      bound
    )
    return compileAggregate(knex, builder, target, plan, store.limits)
  }
  // Time zones on SQLite need functions on the statement's connection, and a many-to-many link joins a
  // table of its own: those are built for each call.
  const needsFunctions = needsSqliteFunctions(target, plan)
  const refusals = params.groupRefusals
  if (refusals && refusals.count > 0 && probesGroups(plan)) {
    const probe = (bound: readonly unknown[]) =>
      compileGroupProbe(
        knex,
        store.statements.whereVisible(joined(knex(resource.table), bound), visible, bound),
        target,
        plan
      )
    const keys = plan.groups.map(({ name, bucket, zone }) => [name, bucket, zone])
    const shape = `aggregate-probe|${JSON.stringify(keys)}|${visible.key}|${scopes.key}`
    const counted = needsFunctions
      ? await withSqliteFunctions(knex, probe(values), runRows)
      : await store.run(params, shape, values, probe)
    checkGroupProbe(plan, counted)
  }
  let rows: Rows
  if (link || needsFunctions) {
    const query = compile(values)
    rows = await withinRange(() =>
      needsFunctions ? withSqliteFunctions(knex, query, runRows) : runRows(query)
    )
  } else {
    // The statement depends on the request (grouping, functions, having, order, paging, zones), on the series
    // a fill spans (which the client's filter bounds) and on the filter's shape; only the filter's values vary
    // from call to call of one dashboard's aggregate, so they are bound into a statement compiled once.
    const fillKeys = plan.fill ? JSON.stringify(plan.fill.keys) : ''
    // Compared buckets bind their steps, which the filter's bounds give, like a fill's series.
    const steps = plan.series?.steps ? JSON.stringify(plan.series.steps) : ''
    const shape = `aggregate|${JSON.stringify(request)}|${fillKeys}|${steps}|${withoutGroupIndexes}|${visible.key}|${scopes.key}`
    rows = await withinRange(() => store.run(params, shape, values, compile))
  }
  if (refusals && exceedsGroups(plan, rows)) refusals.count++
  return decodeAggregateRows(plan, rows)
}

const runRows = (built: Knex.QueryBuilder) => runQuery<Rows>(built)

/**
 * A double computed past the largest one (the variance of ±1e300): PostgreSQL and MariaDB fail the statement
 * where SQLite answers Infinity, which decoding refuses. The same 400 on each, about the request: the
 * database does not say which aggregate overflowed, and no column was written.
 */
async function withinRange<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause
    if (cause && violationOf(cause)?.rule === 'range') {
      throw badField('aggregate', `computes a value out of range: beyond ±${Number.MAX_VALUE}`)
    }
    throw error
  }
}

/** What the first aggregate would otherwise wait for where the database groups by indexes: the table's indexes. */
export async function readGroupIndexes(store: ResourceStore) {
  await store.target.dialect.groupIndexes?.preload(store.Model, store.resource.table)
}

/** See mysql-group-index.ts: whether MariaDB's index for the grouping would make it fetch every row in turn. */
function ignoresGroupIndexes(store: ResourceStore, plan: AggregatePlan, groupIndexes: GroupIndexes) {
  const { softDeleteColumn, table, idField } = store.resource
  const groups = groupKeys(plan)
  const firstBucket = groups.findIndex((group) => group.bucket)
  const ordered = firstBucket === -1 ? groups : groups.slice(0, firstBucket)
  const read = [...groups.slice(ordered.length), ...plan.aggregates].map((column) => column.field.column)
  return groupIndexes.shouldIgnore(store.Model, {
    table,
    groupColumns: ordered.map((group) => group.field.column),
    readColumns: softDeleteColumn ? [...read, softDeleteColumn] : read,
    primaryKey: [idField.column]
  })
}
