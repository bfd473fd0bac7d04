import type { Knex } from 'knex'
import type { SqlTarget } from '../query/sql-target'
import type { Rows } from '../dialect/dialect'
import { groupExpression, tooManyGroups } from './compile'
import { groupKeys, type AggregatePlan } from './plan'

const DISTINCT_GROUPS = '__fq_distinct_groups'
const GROUP_COUNT = '__fq_group_count'

/**
 * Whether a plan can be refused for too many groups by counting its distinct group keys first: only an
 * unpaged grouping of the records themselves. HAVING may drop groups (so more keys than the cap may still
 * answer within it), a fill answers its series, and relation aggregates are bounded per batch of parents.
 */
export const probesGroups = (plan: AggregatePlan) =>
  plan.groups.length > 0 && !plan.paging && !plan.partition && !plan.having && !plan.fill

/**
 * `SELECT COUNT(*) FROM (SELECT DISTINCT keys FROM table WHERE ... LIMIT maxGroups + 1)` over `builder`
 * (which holds the WHERE clause). A grouping must read every row before it answers its first group, where
 * DISTINCT with a LIMIT stops at the first `maxGroups + 1` keys on MariaDB and SQLite: what a grouping that
 * will be refused costs at most, instead of the whole grouping.
 */
export function compileGroupProbe(
  knex: Knex,
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  plan: AggregatePlan
): Knex.QueryBuilder {
  const buckets = target.dialect.dateBuckets
  const keys = groupKeys(plan).map((group, index) =>
    knex.raw('? AS ??', [groupExpression(knex, target, buckets, group), `__fq_key_${index}`])
  )
  const distinct = builder.distinct(keys).limit(plan.maxGroups + 1, { skipBinding: true })
  return knex.count({ [GROUP_COUNT]: '*' }).from(distinct.as(DISTINCT_GROUPS))
}

/** Refuses the plan when its probe found more distinct keys than it may answer. */
export function checkGroupProbe(plan: AggregatePlan, rows: Rows) {
  if (Number(rows[0]?.[GROUP_COUNT] ?? 0) > plan.maxGroups) throw tooManyGroups(plan)
}
