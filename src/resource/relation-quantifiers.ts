import { ConfigurationError } from '../common/errors'
import type { ResolvedRelation, ResolvedResource } from './resolved'

/**
 * How many related records a relation filter asks to match: `R` at least one, `RNone` none, `REvery` all of
 * them (and so a parent with no related record).
 */
export type RelationQuantifier = 'some' | 'none' | 'every'

/** The suffixes of a to-many relation's quantified filter keys (`subTasksNone`, `subTasksEvery`). */
const QUANTIFIER_SUFFIXES = [
  ['None', 'none'],
  ['Every', 'every']
] as const

/** A key of a filter that names a relation filter: the relation and what it asks of its related records. */
export interface RelationFilterKey {
  relation: ResolvedRelation
  quantifier: RelationQuantifier
}

/** The keys `RNone` and `REvery` of a to-many relation `R`, with what each one asks. */
export function quantifiedKeys(relationName: string): Array<[string, RelationQuantifier]> {
  return QUANTIFIER_SUFFIXES.map(([suffix, quantifier]) => [`${relationName}${suffix}`, quantifier])
}

/**
 * The relation filter a filter key names, if any: a field of that name wins (registration refuses the
 * collisions), then a relation (`R`: some), then a relation and a quantifier suffix (`RNone`, `REvery`). A
 * suffix on a to-one relation is returned too, for the parser to refuse by name.
 */
export function relationFilterKey(resource: ResolvedResource, key: string): RelationFilterKey | undefined {
  if (resource.fieldMap.has(key)) return undefined
  const relation = resource.relationMap.get(key)
  if (relation) return { relation, quantifier: 'some' }
  for (const [suffix, quantifier] of QUANTIFIER_SUFFIXES) {
    if (!key.endsWith(suffix)) continue
    const quantified = resource.relationMap.get(key.slice(0, -suffix.length))
    if (quantified) return { relation: quantified, quantifier }
  }
  return undefined
}

/** Why a filter key cannot be read as it is written (a quantifier on a to-one relation), if it cannot. */
export function relationFilterRefusal(
  resource: ResolvedResource,
  { relation, quantifier }: RelationFilterKey
) {
  if (quantifier === 'some' || relation.kind === 'many') return undefined
  return (
    `none and every apply to to-many relations; ${resource.name}.${relation.name} relates to one ` +
    `${relation.target.name} (filter by "${relation.name}")`
  )
}

/**
 * Refuses a resource where a field or relation is named as a to-many relation's generated filter key: the
 * name would mean two things in every filter (and two fields of one GraphQL input type).
 */
export function checkQuantifiedKeys(resource: ResolvedResource) {
  for (const relation of resource.many) {
    for (const [key] of quantifiedKeys(relation.name)) {
      const clash = resource.fieldMap.has(key) ? 'field' : resource.relationMap.has(key) ? 'relation' : ''
      if (!clash) continue
      throw new ConfigurationError(
        `${resource.name}.${key}: the ${clash} "${key}" has the name of the filter key generated for the ` +
          `to-many relation "${relation.name}" (${relation.name}None, ${relation.name}Every: no related ` +
          `record matches, every one does); rename the ${clash} or the relation`
      )
    }
  }
}
