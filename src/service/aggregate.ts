import type { Knex } from 'knex'
import { runQuery } from '../dialect/database-errors'
import { violationOf } from '../dialect/constraint-violations'
import { badField } from '../common/errors'
import type { GroupIndexes } from '../dialect/dialect'
import type { Filter } from '../model/query'
import type { AggregateRequest } from '../model/aggregate'
import type { ResourceParams } from '../model/records'
import { storedColumn } from '../query/sql-target'
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

/**
 * The aggregate rows of a scoped call: planned, compiled into one statement over the records it may see
 * (through `link`'s links for a many-to-many relation, partitioned per parent) and decoded.
 */
export async function aggregateRecords(
  store: ResourceStore,
  request: AggregateRequest,
  params: ResourceParams,
  filter: Filter | undefined,
  link: Link | undefined
) {
  const { resource, target } = store
  const { maxAggregateGroups: maxGroups, maxFillBuckets } = resource
  const plan = planAggregate(resource, request, { maxGroups, maxFillBuckets, filter })
  // Partitioned by the links' key when a many-to-many relation's records are aggregated per parent.
  if (link) {
    plan.partition = {
      field: link.foreignKey,
      column: storedColumn(link.target, link.foreignKey),
      alias: PARTITION_ALIAS
    }
  }
  const knex = store.knex(params)
  const { groupIndexes } = target.dialect
  const withoutGroupIndexes =
    !link && !!groupIndexes && (await ignoresGroupIndexes(store, plan, groupIndexes))
  const visible = await store.visible(params, filter, link)
  const compile = (bound: readonly unknown[]) => {
    const table = withoutGroupIndexes
      ? groupIndexes!.tableWithout(knex, resource.table)
      : knex(resource.table)
    const builder = store.statements.whereVisible(
      link ? store.statements.joinLink(table, link) : table,
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
        store.statements.whereVisible(knex(resource.table), visible, bound),
        target,
        plan
      )
    const keys = plan.groups.map(({ field, column, bucket, zone }) => [field.name, column, bucket, zone])
    const shape = `aggregate-probe|${JSON.stringify(keys)}|${visible.key}`
    const counted = needsFunctions
      ? await withSqliteFunctions(knex, probe(visible.values), runRows)
      : await store.run(params, shape, visible.values, probe)
    checkGroupProbe(plan, counted)
  }
  let rows: Rows
  if (link || needsFunctions) {
    const query = compile(visible.values)
    rows = await withinRange(() =>
      needsFunctions ? withSqliteFunctions(knex, query, runRows) : runRows(query)
    )
  } else {
    // The statement depends on the request (grouping, functions, having, order, paging, zones), on the series
    // a fill spans (which the client's filter bounds) and on the filter's shape; only the filter's values vary
    // from call to call of one dashboard's aggregate, so they are bound into a statement compiled once.
    const fillKeys = plan.fill ? JSON.stringify(plan.fill.keys) : ''
    const shape = `aggregate|${JSON.stringify(request)}|${fillKeys}|${withoutGroupIndexes}|${visible.key}`
    rows = await withinRange(() => store.run(params, shape, visible.values, compile))
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
