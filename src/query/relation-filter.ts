import type { ResolvedRelation, ResolvedResource } from '../resource/resolved'
import type { Filter } from '../model/query'
import { relationFilterKey, type RelationQuantifier } from '../resource/relation-quantifiers'
import type { Exists } from './parsed-filter'
import type { SqlTarget } from './sql-target'

/**
 * What the caller may read of each resource a filter's relation filters reach (its `authorize` filter and
 * `defaultFilter`, as a `find` of that resource would apply them; undefined: everything), worked out before
 * the filter is parsed, since `authorize` may be asynchronous and the compiler is not.
 */
export type RelationScopes = ReadonlyMap<ResolvedResource, Filter | undefined>

/** Under an alias of its own, so that a relation back to the same table is correlated with the outer row. */
function aliased(outer: SqlTarget, resource: ResolvedResource, alias: string): SqlTarget {
  return { resource, dialect: outer.dialect, table: alias }
}

const column = (target: SqlTarget, name: string) => `${target.table}.${name}`

function liveColumn(target: SqlTarget) {
  const { softDeleteColumn } = target.resource
  return softDeleteColumn ? [column(target, softDeleteColumn)] : []
}

/**
 * The EXISTS of `outer`'s relation, numbered `number` in its statement, asking `quantifier` of the related
 * rows; the parser fills in the conditions.
 */
export function existsCondition(
  outer: SqlTarget,
  relation: ResolvedRelation,
  quantifier: RelationQuantifier,
  number: number
): Exists {
  const related = aliased(outer, relation.target, `__fq_r${number}`)
  const relatedId = column(related, relation.target.idField.column)
  const outerId = column(outer, outer.resource.idField.column)
  const empty = { exists: true as const, quantifier, target: related, conditions: [], scope: [] }
  if (relation.kind === 'one') {
    const correlation: [string, string] = [relatedId, column(outer, relation.foreignKey.column)]
    return { ...empty, correlation, liveColumns: liveColumn(related) }
  }
  if (!relation.through) {
    const correlation: [string, string] = [column(related, relation.foreignKey.column), outerId]
    return { ...empty, correlation, liveColumns: liveColumn(related) }
  }
  const { through } = relation
  const link = aliased(outer, through.resource, `__fq_l${number}`)
  return {
    ...empty,
    link: { target: link, on: [relatedId, column(link, through.otherKey.column)], conditions: [] },
    correlation: [column(link, through.foreignKey.column), outerId],
    liveColumns: [...liveColumn(related), ...liveColumn(link)]
  }
}

/**
 * The resources whose scopes a filter of `resource` needs: the target (and join resource) of each relation
 * filter in it, at any depth. Malformed parts are left for the parser to refuse; the walk stops past
 * `maxDepth` relation levels, where the parser refuses the filter anyway.
 */
export function relatedResources(
  resource: ResolvedResource,
  filter: Filter | undefined,
  maxDepth: number,
  into = new Set<ResolvedResource>(),
  depth = 0
): Set<ResolvedResource> {
  if (!filter || typeof filter !== 'object' || Array.isArray(filter) || depth >= maxDepth) return into
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined || value === null) continue
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value)) continue
      for (const member of value) relatedResources(resource, member, maxDepth, into, depth)
      continue
    }
    const relation = relationFilterKey(resource, key)?.relation
    if (!relation) continue
    into.add(relation.target)
    if (relation.kind === 'many' && relation.through) into.add(relation.through.resource)
    relatedResources(relation.target, value as Filter, maxDepth, into, depth + 1)
  }
  return into
}
