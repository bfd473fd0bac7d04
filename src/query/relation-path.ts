import type { ResolvedField, ResolvedOneRelation, ResolvedResource } from '../resource/resolved'

/**
 * A dotted name through to-one relations to a field of the last one's resource (`todoItem.owner.name`), or
 * a field of the resource itself (`title`): what groupings and sorts name a related record's field by.
 */
export interface RelationPath {
  /** The name as given, the key groups are answered under. */
  name: string
  /** The to-one relations walked, in order; empty for a field of the resource itself. */
  relations: ResolvedOneRelation[]
  /** The resource the field belongs to: the last relation's target, or the resource itself. */
  resource: ResolvedResource
  field: ResolvedField
}

/** Why a path cannot be walked, or the path. */
export type PathResult = RelationPath | { problem: string }

/**
 * Walks `name` from `resource`: every member but the last must be a filterable to-one relation (clients may
 * filter by it already, so ordering or grouping by it reveals nothing more), at most `maxDepth` of them
 * (`limits.maxRelationDepth`, the depth relation filters may nest to). The last member must be a stored or
 * SQL-computed field; what else it must be (groupable, sortable) is the caller's to decide.
 */
export function relationPath(resource: ResolvedResource, name: unknown, maxDepth: number): PathResult {
  if (typeof name !== 'string' || name === '') return { problem: `${resource.name} has no field "${name}"` }
  const members = name.split('.')
  const relations: ResolvedOneRelation[] = []
  let current = resource
  for (const member of members.slice(0, -1)) {
    const relation = current.fieldMap.has(member) ? undefined : current.relationMap.get(member)
    if (!relation) return { problem: `${current.name} has no relation "${member}"` }
    if (relation.kind !== 'one') {
      return {
        problem: `${member} is a to-many relation: only to-one relations lead to one value per record`
      }
    }
    if (!relation.filterable) return { problem: `${current.name}.${member} is not a filterable relation` }
    relations.push(relation)
    current = relation.target
  }
  if (relations.length > maxDepth) {
    return { problem: `goes through more than ${maxDepth} relations (limits.maxRelationDepth)` }
  }
  const last = members[members.length - 1]
  const field = current.fieldMap.get(last)
  if (!field || field.computed) return { problem: `${current.name} has no field "${last}"` }
  return { name, relations, resource: current, field }
}
