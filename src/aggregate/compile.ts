import type { Knex } from 'knex'
import { badField } from '../errors'
import { qualified, type SqlTarget } from '../query/compile-filter'
import type {
  AggregateFunction,
  AggregateRequest,
  AggregateResponse,
  PartitionedAggregates
} from '../query/model'
import { decodePartitions, decodeResponses, overflowAlias } from './decode'
import { PARTITION_ALIAS, planAggregate, type AggregatePlan, type GroupColumn } from './plan'
import type { ResolvedField } from '../resource/resolve'

const FUNCTION_SQL: Record<'count' | 'min' | 'max', string> = {
  count: 'COUNT(??)',
  min: 'MIN(??)',
  max: 'MAX(??)'
}

function aggregateExpression(knex: Knex, target: SqlTarget, fn: AggregateFunction, column: string): Knex.Raw {
  // Sums and averages differ per database (see the dialect table); the rest is standard SQL.
  if (fn === 'sum') return target.dialect.sum(column)
  if (fn === 'avg') return target.dialect.average(column)
  return knex.raw(FUNCTION_SQL[fn], [column])
}

function groupExpression(knex: Knex, target: SqlTarget, group: GroupColumn): Knex.Raw {
  const column = group.column ?? qualified(target, group.field)
  return group.bucket ? target.dialect.dateBucket(column, group.bucket) : knex.raw('??', [column])
}

/**
 * One SELECT for the whole request: the partition key and the group keys (grouped and ordered ascending,
 * NULLs first as in sorting), then one aggregate per requested function and field. GROUP BY and ORDER BY
 * repeat the expressions rather than the aliases, which Postgres does not accept inside expressions.
 */
function selectAggregates(knex: Knex, builder: Knex.QueryBuilder, target: SqlTarget, plan: AggregatePlan) {
  const groups = plan.partition ? [plan.partition, ...plan.groups] : plan.groups
  for (const group of groups) {
    const expression = groupExpression(knex, target, group)
    builder.select(knex.raw('? AS ??', [expression, group.alias])).groupBy(expression)
    if (group.field.nullable) builder.orderByRaw('(? IS NULL) DESC', [expression])
    builder.orderByRaw('? ASC', [expression])
  }
  const { overflowed } = target.dialect
  for (const { fn, field, alias } of plan.aggregates) {
    const column = qualified(target, field)
    builder.select(knex.raw('? AS ??', [aggregateExpression(knex, target, fn, column), alias]))
    if (overflowed && (fn === 'sum' || fn === 'avg')) {
      builder.select(knex.raw('? AS ??', [overflowed(column), overflowAlias(alias)]))
    }
  }
  return builder
}

export interface CompiledAggregate {
  query: Knex.QueryBuilder
  decode(rows: Record<string, unknown>[]): AggregateResponse[] | PartitionedAggregates
}

/**
 * The 400 of a request that groups into more than `maxGroups` rows. The statement reads one row past the
 * limit, so a grouping by the id of a million records costs the server `maxGroups + 1` rows, not a million.
 */
function tooManyGroups(plan: AggregatePlan, maxGroups: number) {
  const what = plan.partition ? 'groups of all the parents together' : 'groups'
  return badField(
    'groupBy',
    `gives more than ${maxGroups} ${what}; filter the records or group by fewer or coarser fields`
  )
}

/**
 * Turns an aggregate request into one statement over `builder` (which already holds the WHERE clause: scope,
 * filter, soft delete) and the decoder of its rows. Invalid requests are 400s naming each offending entry,
 * and so is a result of more than the resource's `maxAggregateGroups` rows (groups, or partitions of them).
 */
export function compileAggregate(
  knex: Knex,
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  request: AggregateRequest,
  /** Partitioned by a column of another table (a many-to-many read's links), holding `field`'s values. */
  partition?: { field: ResolvedField; column: string }
): CompiledAggregate {
  const plan = planAggregate(target.resource, request)
  if (partition) plan.partition = { ...partition, alias: PARTITION_ALIAS }
  const maxGroups = target.resource.maxAggregateGroups
  return {
    query: selectAggregates(knex, builder, target, plan).limit(maxGroups + 1),
    decode: (rows) => {
      if (rows.length > maxGroups) throw tooManyGroups(plan, maxGroups)
      return plan.partition ? decodePartitions(plan, rows) : decodeResponses(plan, rows)
    }
  }
}
