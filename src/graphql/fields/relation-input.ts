import { GraphQLID, GraphQLList, type GraphQLFieldConfigMap } from 'graphql'
import { badField } from '../../common/errors'
import { upperFirst } from '../../resource/naming'
import type { ResolvedManyRelation, ResolvedResource } from '../../resource/resolved'
import { maxMultiOf } from '../../service/multi'
import type { GraphqlContext } from './context'
import { withWork } from '../type/field-work'
import { objectType } from '../type/object-type'
import type { GraphqlTypes } from '../type/registry'
import { inputObject, nonNull } from '../type/inputs'

/** The input of nestjs-query's relation mutations: `{ id, relationId }` or `{ id, relationIds }`. */
export type RelationInput = { id: string; relationId?: string; relationIds?: string[] }

/** The id of the record the caller may read, or NOT_FOUND: a hidden parent is as missing as in a query. */
export async function readable(context: GraphqlContext, resource: ResolvedResource, id: string) {
  const record = await context.service(resource).get(id, context.params())
  return record[resource.idField.name]
}

/** `relationIds`, at most the changed resource's `maxMulti` of them. */
export function relationIdsOf(input: RelationInput, changed: ResolvedResource) {
  const ids = input.relationIds ?? []
  const max = maxMultiOf(changed)
  if (ids.length > max)
    throw badField('input.relationIds', `names at most ${max} records (${ids.length} given)`)
  return ids
}

/** How one of a many-relation's mutations changes it, given the parent's id and the input's `relationIds`. */
export type RelationChange = (context: GraphqlContext, parentId: unknown, ids: string[]) => Promise<void>

/**
 * `add<Relation>To<R>`, `set<Relation>On<R>` and `remove<Relation>From<R>` (input: `{id, relationIds}`, answer:
 * R), for each of `changes` given: in one transaction, the parent read (a hidden parent is NOT_FOUND), the
 * change made, the parent read again. At most `changed`'s `maxMulti` ids per call (the resource whose records
 * the changes write).
 */
export function manyRelationMutationFields(
  types: GraphqlTypes,
  resource: ResolvedResource,
  relation: ResolvedManyRelation,
  changed: ResolvedResource,
  changes: { add: RelationChange; set?: RelationChange; remove?: RelationChange }
): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  const Relation = upperFirst(relation.name)
  const field = (name: string, change: RelationChange) =>
    withWork<unknown, GraphqlContext>(
      {
        type: nonNull(objectType(types, resource)),
        args: {
          input: {
            type: nonNull(
              inputObject(types, `${upperFirst(name)}Input`, {
                id: [nonNull(GraphQLID), 'The id of the record.'],
                relationIds: [nonNull(new GraphQLList(nonNull(GraphQLID))), 'The ids of the relations.']
              })
            )
          }
        },
        resolve: (_source, args, context) => {
          const parsed = args.input as RelationInput
          const ids = relationIdsOf(parsed, changed)
          return context.inTransaction(resource, async () => {
            const parentId = await readable(context, resource, parsed.id)
            await change(context, parentId, ids)
            return context.service(resource).get(parsed.id, context.params())
          })
        }
      },
      { statements: 'once' }
    )
  const names = {
    add: `add${Relation}To${resource.name}`,
    set: `set${Relation}On${resource.name}`,
    remove: `remove${Relation}From${resource.name}`
  }
  const fields: GraphQLFieldConfigMap<unknown, GraphqlContext> = {}
  for (const kind of ['add', 'set', 'remove'] as const) {
    const change = changes[kind]
    if (change) fields[names[kind]] = field(names[kind], change)
  }
  return fields
}
