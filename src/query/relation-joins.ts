import type { Knex } from 'knex'
import type {
  ResolvedField,
  ResolvedManyRelation,
  ResolvedOneRelation,
  ResolvedResource
} from '../resource/resolved'
import type { SortAggregate } from '../model/query'
import { applyParsedFilter } from './compile-filter'
import type { ParsedFilter } from './parsed-filter'
import { storedColumn, type SqlTarget } from './sql-target'

/**
 * One to-one relation LEFT JOINed to a statement, so that its record's fields can be grouped and sorted by:
 * the related table under an alias of its own, joined to the record (or to the relation before it).
 */
export interface RelationJoin {
  /** The relations' names from the statement's resource, dotted: one join per distinct chain. */
  key: string
  relation: ResolvedOneRelation
  /** The table the foreign key is read from: the statement's, or the previous join's alias. */
  parent: SqlTarget
  /** The related table under its alias. */
  target: SqlTarget
}

/**
 * One aggregate of a to-many relation's records per record of the statement, LEFT JOINed as a grouped
 * derived table, so that records can be sorted by it (todo items by their sub-tasks' count or points).
 */
export interface AggregateJoin {
  /** One-to-many, or many-to-many through its join resource's links. */
  relation: ResolvedManyRelation
  fn: SortAggregate
  /** The aggregated field; none: `count` of the related records themselves. */
  field?: ResolvedField
  /** The derived table's alias. */
  alias: string
}

/** The derived table's columns: the parent's id and the aggregate. */
export const AGGREGATE_KEY = '__fq_key'
export const AGGREGATE_VALUE = '__fq_value'

/** The joins that reach the end of every chain, each chain prefix joined once, in the order first named. */
export function relationJoins(outer: SqlTarget, chains: ResolvedOneRelation[][]): RelationJoin[] {
  const joins: RelationJoin[] = []
  for (const chain of chains) {
    let parent = outer
    let key = ''
    for (const relation of chain) {
      key = key ? `${key}.${relation.name}` : relation.name
      let join = joins.find((candidate) => candidate.key === key)
      if (!join) {
        const target = { resource: relation.target, dialect: outer.dialect, table: `__fq_j${joins.length}` }
        join = { key, relation, parent, target }
        joins.push(join)
      }
      parent = join.target
    }
  }
  return joins
}

/** The target a chain ends at: its last join's, or `outer` for an empty chain. */
export function joinedTarget(outer: SqlTarget, joins: RelationJoin[], chain: ResolvedOneRelation[]) {
  if (!chain.length) return outer
  const key = chain.map((relation) => relation.name).join('.')
  const join = joins.find((candidate) => candidate.key === key)
  if (!join) throw new Error(`No join of ${key}`)
  return join.target
}

/**
 * What the caller may read of each joined relation's resource (its `authorize` and `defaultFilter`, as its
 * own `find` applies them), parsed on that resource's table: the joins' scopes, in join order.
 */
export interface JoinScopes {
  scopes: ParsedFilter[]
  /** Every scope's values, in join order: bound after the statement's own. */
  values: unknown[]
  /** The scopes' shapes, for the statement's shape key. */
  key: string
}

export const NO_JOIN_SCOPES: JoinScopes = Object.freeze({ scopes: [], values: [], key: '' })

export function joinScopes(scopes: ParsedFilter[]): JoinScopes {
  return {
    scopes,
    values: scopes.flatMap((scope) => scope.values),
    key: scopes.map((scope) => `[${scope.key}]`).join('')
  }
}

/**
 * `LEFT JOIN (SELECT * FROM related WHERE live AND scope) AS __fq_jN ON __fq_jN.id = parent.fk` for each
 * join: a record whose related record is missing, soft-deleted or outside what the caller may read of it
 * finds no row, so its related fields read NULL and it keeps its place in the statement. The scope sits in
 * a derived table rather than in ON, where the EXISTS of a scope's relation filters cannot go; every
 * database merges it into the join. The scopes' values are `bound[at]` on.
 */
export function applyRelationJoins(
  knex: Knex,
  builder: Knex.QueryBuilder,
  joins: RelationJoin[],
  scoped: JoinScopes,
  bound: readonly unknown[],
  at: number
) {
  let next = at
  joins.forEach((join, index) => {
    const { resource } = join.target
    const scope = scoped.scopes[index]
    const related = knex(resource.table).select(`${resource.table}.*`)
    readable(related, join.target, scope, bound.slice(next, next + scope.values.length))
    next += scope.values.length
    builder.leftJoin(
      related.as(join.target.table),
      storedColumn(join.target, resource.idField),
      storedColumn(join.parent, join.relation.foreignKey)
    )
  })
  return builder
}

/** Live records within the caller's scope, on the resource's own table (inside a derived table). */
function readable(
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  scope: ParsedFilter,
  bound: readonly unknown[]
) {
  const { resource } = target
  const own: SqlTarget = { resource, dialect: target.dialect, table: resource.table }
  if (resource.softDeleteColumn) builder.whereNull(`${resource.table}.${resource.softDeleteColumn}`)
  return applyParsedFilter(builder, own, scope, bound)
}

/** The aggregate's SQL over the related table; counts and sums as the aggregates compute them. */
function aggregateSql(knex: Knex, target: SqlTarget, join: AggregateJoin) {
  const { fn, field } = join
  const table = target.resource.table
  if (!field) return knex.raw('COUNT(*)')
  const column = `${table}.${field.column}`
  const integers = field.kind === 'integer'
  if (fn === 'sum') return target.dialect.sum(column, integers)
  if (fn === 'avg') return target.dialect.average(column, integers)
  const sql = { count: 'COUNT(??)', countDistinct: 'COUNT(DISTINCT ??)', min: 'MIN(??)', max: 'MAX(??)' }[fn]
  return knex.raw(sql, [column])
}

/**
 * The resources whose scopes an aggregate join applies, in the order it binds their values: the related
 * resource, and for many-to-many the join resource, whose links the caller must be able to read too.
 */
export function aggregateScopeResources(join: AggregateJoin): ResolvedResource[] {
  const { relation } = join
  return relation.through ? [relation.target, relation.through.resource] : [relation.target]
}

/**
 * `LEFT JOIN (SELECT fk AS __fq_key, SUM(points) AS __fq_value FROM related WHERE live AND scope GROUP BY fk)
 * AS __fq_aN ON __fq_aN.__fq_key = outer.id` for each aggregate: the related records the caller may read,
 * aggregated once per parent (a parent without any finds no row: its count reads 0 through COALESCE, its
 * other aggregates NULL). Many-to-many reads the related records through their live, readable links, keyed
 * by the link's parent id. The scopes' values are `bound[at]` on, in the order of `aggregateScopeResources`.
 */
export function applyAggregateJoins(
  knex: Knex,
  builder: Knex.QueryBuilder,
  outer: SqlTarget,
  aggregates: AggregateJoin[],
  scoped: JoinScopes,
  bound: readonly unknown[],
  at: number
) {
  let next = at
  let scopeIndex = 0
  const scopeOf = (grouped: Knex.QueryBuilder, target: SqlTarget) => {
    const scope = scoped.scopes[scopeIndex++]
    readable(grouped, target, scope, bound.slice(next, next + scope.values.length))
    next += scope.values.length
  }
  for (const join of aggregates) {
    const { relation } = join
    const related: SqlTarget = { resource: relation.target, dialect: outer.dialect, table: join.alias }
    const table = related.resource.table
    const grouped = knex(table)
    let key: string
    if (relation.through) {
      const links = relation.through.resource.table
      grouped.join(
        links,
        `${links}.${relation.through.otherKey.column}`,
        `${table}.${relation.target.idField.column}`
      )
      key = `${links}.${relation.through.foreignKey.column}`
    } else {
      key = `${table}.${relation.foreignKey.column}`
    }
    grouped
      .select(knex.raw('?? AS ??', [key, AGGREGATE_KEY]))
      .select(knex.raw('? AS ??', [aggregateSql(knex, related, join), AGGREGATE_VALUE]))
      .groupBy(key)
    scopeOf(grouped, related)
    if (relation.through) scopeOf(grouped, { ...related, resource: relation.through.resource })
    builder.leftJoin(
      grouped.as(join.alias),
      `${join.alias}.${AGGREGATE_KEY}`,
      storedColumn(outer, outer.resource.idField)
    )
  }
  return builder
}
