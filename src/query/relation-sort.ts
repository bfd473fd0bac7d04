import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { aggregateProblem } from '../resource/aggregatable'
import type { ResolvedField, ResolvedOneRelation, ResolvedResource } from '../resource/resolved'
import { SORT_AGGREGATES, type SortField } from '../model/query'
import type { SqlColumn } from '../dialect/dialect'
import { qualified, type SqlTarget } from './sql-target'
import { relationPath } from './relation-path'
import {
  aggregateScopeResources,
  AGGREGATE_VALUE,
  applyAggregateJoins,
  applyRelationJoins,
  joinedTarget,
  relationJoins,
  type AggregateJoin,
  type JoinScopes,
  type RelationJoin
} from './relation-joins'

/** What a sort joins: to-one relations (for their records' fields) and relation aggregates. */
export interface RelationSorts {
  /** The to-one chains sorted by, each joined once per distinct prefix (see `relationJoins`). */
  chains: ResolvedOneRelation[][]
  joins: RelationJoin[]
  aggregates: AggregateJoin[]
}

/** Whether a sort joins anything: then keysets cannot page by it. */
export const joinsRelations = (relations: RelationSorts) =>
  relations.joins.length > 0 || relations.aggregates.length > 0

/** The scopes of a sort's joins, asked of each joined resource for the caller. */
export interface SortScopes {
  joins: JoinScopes
  aggregates: JoinScopes
  /** Their values, bound after the filter's: the joins', then the aggregates'. */
  values: unknown[]
  key: string
}

export async function sortScopes(
  relations: RelationSorts,
  scopesOf: (resources: ResolvedResource[]) => Promise<JoinScopes>
): Promise<SortScopes> {
  const [joins, aggregates] = await Promise.all([
    scopesOf(relations.joins.map((join) => join.target.resource)),
    scopesOf(relations.aggregates.flatMap(aggregateScopeResources))
  ])
  return {
    joins,
    aggregates,
    values: [...joins.values, ...aggregates.values],
    key: `${joins.key}/${aggregates.key}`
  }
}

/** The sort's joins added to `builder`, their scopes' values `bound[at]` on. */
export function applyRelationSorts(
  knex: Knex,
  builder: Knex.QueryBuilder,
  outer: SqlTarget,
  relations: RelationSorts,
  scopes: SortScopes,
  bound: readonly unknown[],
  at: number
) {
  applyRelationJoins(knex, builder, relations.joins, scopes.joins, bound, at)
  const next = at + scopes.joins.values.length
  return applyAggregateJoins(knex, builder, outer, relations.aggregates, scopes.aggregates, bound, next)
}

interface RelationTerm {
  field: ResolvedField
  column: SqlColumn
  nullable: boolean
  joinedKey: string
}

interface Limits {
  maxRelationDepth: number
  maxRelationFilters: number
}

/**
 * A sort key of related records: a dotted path through to-one relations to a field the related resource
 * lets clients filter (and so sort) by, or with `aggregate` an aggregate of a to-many relation's records.
 * Each join counts against `maxRelationFilters`, as a relation filter's EXISTS does; paths nest at most
 * `maxRelationDepth` relations deep.
 */
export function relationSortKey(
  knex: Knex,
  target: SqlTarget,
  sort: SortField,
  path: string,
  relations: RelationSorts,
  limits: Limits
): RelationTerm {
  const term = sort.aggregate === undefined ? toOneKey(target, sort, path, relations, limits) : undefined
  const result = term ?? aggregateKey(knex, target, sort, path, relations)
  if (relations.joins.length + relations.aggregates.length > limits.maxRelationFilters) {
    throw badField(
      `${path}.field`,
      `a sort may join at most ${limits.maxRelationFilters} relations (limits.maxRelationFilters)`
    )
  }
  return result
}

function toOneKey(
  target: SqlTarget,
  sort: SortField,
  path: string,
  relations: RelationSorts,
  limits: Limits
): RelationTerm {
  const found = relationPath(target.resource, sort.field, limits.maxRelationDepth)
  if ('problem' in found) throw badField(`${path}.field`, found.problem)
  const { field, resource } = found
  if (!field.filterable || field.hidden) {
    throw badField(`${path}.field`, `${resource.name} cannot be sorted by "${field.name}"`)
  }
  relations.chains.push(found.relations)
  relations.joins = relationJoins(target, relations.chains)
  const column = qualified(joinedTarget(target, relations.joins, found.relations), field)
  return { field, column, nullable: true, joinedKey: `path ${JSON.stringify(found.name)}` }
}

/**
 * `{field: 'subTasks.points', aggregate: 'sum'}`: the aggregate of the field over the records of a to-many
 * relation (`subTasks` alone with `count`: how many there are), as far as the caller may read them. Counts
 * are 0 where there is none; the other aggregates NULL.
 */
function aggregateKey(
  knex: Knex,
  target: SqlTarget,
  sort: SortField,
  path: string,
  relations: RelationSorts
): RelationTerm {
  const { resource } = target
  const fn = sort.aggregate!
  if (!SORT_AGGREGATES.includes(fn)) {
    throw badField(`${path}.aggregate`, `must be one of ${SORT_AGGREGATES.join(', ')}`)
  }
  const [name, fieldName, ...rest] = typeof sort.field === 'string' ? sort.field.split('.') : []
  const relation = name === undefined ? undefined : resource.relationMap.get(name)
  if (!relation || resource.fieldMap.has(name)) {
    throw badField(`${path}.field`, `${resource.name} has no relation "${name}" to aggregate`)
  }
  if (relation.kind !== 'many') {
    throw badField(`${path}.field`, `${name} is a to-one relation: sort by its fields (${name}.field)`)
  }
  if (!relation.filterable)
    throw badField(`${path}.field`, `${resource.name}.${name} is not a filterable relation`)
  if (rest.length) throw badField(`${path}.field`, "aggregates a field of the relation's own records only")
  const field = fieldName === undefined ? undefined : relation.target.fieldMap.get(fieldName)
  if (fieldName === undefined && fn !== 'count') {
    throw badField(`${path}.field`, `${fn} needs a field of ${relation.target.name}: ${name}.field`)
  }
  if (fieldName !== undefined) {
    const problem =
      !field || field.computed
        ? `${relation.target.name} has no field "${fieldName}"`
        : aggregateProblem(fn, field)
    if (problem) throw badField(`${path}.field`, problem)
  }
  const alias = `__fq_a${relations.aggregates.length}`
  relations.aggregates.push({ relation, fn, field, alias })
  const value = `${alias}.${AGGREGATE_VALUE}`
  const counting = fn === 'count' || fn === 'countDistinct'
  const column = counting ? knex.raw('COALESCE(??, 0)', [value]) : value
  const key = `${fn}(${JSON.stringify(sort.field)})`
  // The id stands in for a count of records: a field of an integer kind, never null.
  return {
    field: field ?? relation.target.idField,
    column,
    nullable: !counting,
    joinedKey: key
  }
}
