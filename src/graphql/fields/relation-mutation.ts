import { GraphQLID, type GraphQLFieldConfigMap } from 'graphql'
import { badField } from '../../common/errors'
import type { Filter } from '../../model/query'
import { upperFirst } from '../../resource/naming'
import type {
  ResolvedField,
  ResolvedHasManyRelation,
  ResolvedOneRelation,
  ResolvedResource
} from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { maxMultiOf } from '../../service/multi'
import type { GraphqlContext } from './context'
import { withWork } from '../type/field-work'
import { asForeignKey } from '../type/field-types'
import { objectType } from '../type/object-type'
import type { GraphqlTypes } from '../type/registry'
import { inputObject, nonNull } from '../type/inputs'
import { namingFields } from './input-errors'
import { updateSchemaOf } from '../../resource/input-schemas'
import { linkMutationFields, linkable } from './link-mutation'
import { manyRelationMutationFields, readable, type RelationInput } from './relation-input'

type Fields = GraphQLFieldConfigMap<unknown, GraphqlContext>
type Input = RelationInput

/**
 * Points one child at `parentId` (or at nothing) through the child's own `patch`, so its guards, hooks,
 * `authorize` and reference check apply; `onlyIf` narrows the patch (a hidden or non-matching child is
 * NOT_FOUND). A refused value is named as the input's field.
 */
function pointChild(
  context: GraphqlContext,
  child: ResolvedResource,
  foreignKey: ResolvedField,
  childId: string,
  parentId: unknown,
  field: string,
  onlyIf?: Filter
) {
  const value = parentId === null ? null : asForeignKey(foreignKey, parentId)
  // The body has one property, the foreign key: whatever is wrong with it is wrong with the input's id.
  return namingFields(
    () => field,
    () =>
      context
        .service(child)
        .patch(childId, { [foreignKey.name]: value }, context.params(onlyIf ? { filter: onlyIf } : {}))
  )
}

/**
 * `set<Relation>On<R>(input: {id, relationId})` and `remove<Relation>From<R>(input: {id, relationId})` for a
 * one-relation of R: the record's foreign key set to the target (which the caller must be able to read), or
 * cleared when it points at that target. A required foreign key can never be cleared: no remove then.
 */
function oneRelationMutations(
  types: GraphqlTypes,
  resource: ResolvedResource,
  relation: ResolvedOneRelation
): Fields {
  const Relation = upperFirst(relation.name)
  const { target, foreignKey } = relation
  const input = (name: string) => ({
    type: nonNull(
      inputObject(types, name, {
        id: [nonNull(GraphQLID), 'The id of the record.'],
        relationId: [nonNull(GraphQLID), 'The id of relation.']
      })
    )
  })
  const node = () => nonNull(objectType(types, resource))
  const setName = `set${Relation}On${resource.name}`
  const removeName = `remove${Relation}From${resource.name}`
  const set: Fields = {
    [setName]: withWork(
      {
        type: node(),
        args: { input: input(`${upperFirst(setName)}Input`) },
        resolve: (_source, args, context) => {
          const { id, relationId } = args.input as Input
          return context.inTransaction(resource, async () => {
            const targetId = await readable(context, target, relationId!)
            return pointChild(context, resource, foreignKey, id, targetId, 'input.relationId')
          })
        }
      },
      { statements: 'once' }
    )
  }
  if (!foreignKey.nullable) return set
  return {
    ...set,
    [removeName]: withWork(
      {
        type: node(),
        args: { input: input(`${upperFirst(removeName)}Input`) },
        resolve: (_source, args, context) => {
          const { id, relationId } = args.input as Input
          return context.inTransaction(resource, async () => {
            const targetId = await readable(context, target, relationId!)
            const pointsThere = { [foreignKey.name]: { eq: asForeignKey(foreignKey, targetId) } } as Filter
            return pointChild(context, resource, foreignKey, id, null, 'input.relationId', pointsThere)
          })
        }
      },
      { statements: 'once' }
    )
  }
}

/**
 * `add<Relation>To<R>`, `set<Relation>On<R>` and `remove<Relation>From<R>` (input: `{id, relationIds}`) for a
 * many-relation of R: each named child's foreign key set to R's id (set also clears it on R's other
 * children; remove clears it on the named ones, which must point at R). R must be readable by the caller,
 * each child changeable through its own `patch`; one transaction, so a hidden child (NOT_FOUND) or a refused
 * change leaves every child as it was. At most the child resource's `maxMulti` ids per call. A required
 * foreign key can never be cleared: only add then, which moves children from their parent to R.
 */
function manyRelationMutations(
  types: GraphqlTypes,
  resource: ResolvedResource,
  relation: ResolvedHasManyRelation
): Fields {
  const { target, foreignKey } = relation
  const add = async (context: GraphqlContext, parentId: unknown, ids: string[]) => {
    for (const [index, childId] of ids.entries()) {
      await pointChild(context, target, foreignKey, childId, parentId, `input.relationIds.${index}`)
    }
  }
  const pointingAt = (parentId: unknown): Filter => ({
    [foreignKey.name]: { eq: asForeignKey(foreignKey, parentId) }
  })
  const remove = async (context: GraphqlContext, parentId: unknown, ids: string[]) => {
    for (const [index, childId] of ids.entries()) {
      await pointChild(
        context,
        target,
        foreignKey,
        childId,
        null,
        `input.relationIds.${index}`,
        pointingAt(parentId)
      )
    }
  }
  const set = async (context: GraphqlContext, parentId: unknown, ids: string[]) => {
    const max = maxMultiOf(target)
    const idName = target.idField.name
    const current = (await context
      .service(target)
      .find(context.params({ filter: pointingAt(parentId), select: [idName], paging: { limit: max } }))) as {
      data: ResourceRecord[]
      hasNextPage: boolean
    }
    if (current.hasNextPage) {
      throw badField('input.id', `has more than ${max} ${relation.name}; change them with add and remove`)
    }
    const kept = new Set(ids.map(String))
    const others = current.data
      .map((record) => String(record[idName]))
      .filter((childId) => !kept.has(childId))
    for (const childId of others) {
      await pointChild(context, target, foreignKey, childId, null, 'input.relationIds', pointingAt(parentId))
    }
    await add(context, parentId, ids)
  }
  const changes = foreignKey.nullable ? { add, set, remove } : { add }
  return manyRelationMutationFields(types, resource, relation, target, changes)
}

/**
 * The relation mutations nestjs-query generates, for relations whose foreign key the caller may write: the
 * owning resource's updates are enabled and the key is in its update body.
 */
export function relationMutationFields(types: GraphqlTypes, resource: ResolvedResource): Fields {
  const writable = (owner: ResolvedResource, key: ResolvedField) =>
    !owner.definition.update?.disabled && key.name in updateSchemaOf(owner).properties
  const fields: Fields = {}
  for (const relation of resource.one) {
    if (writable(resource, relation.foreignKey))
      Object.assign(fields, oneRelationMutations(types, resource, relation))
  }
  for (const relation of resource.many) {
    if (relation.through) {
      if (linkable(relation.through)) Object.assign(fields, linkMutationFields(types, resource, relation))
    } else if (writable(relation.target, relation.foreignKey)) {
      Object.assign(fields, manyRelationMutations(types, resource, relation))
    }
  }
  return fields
}
