import { NotFound } from '@feathersjs/errors'
import type { GraphQLFieldConfigMap } from 'graphql'
import { badField } from '../../common/errors'
import type { Filter, Scalar } from '../../model/query'
import type { ResolvedJoin, ResolvedManyToManyRelation, ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { maxMultiOf } from '../../service/multi'
import type { GraphqlContext } from './context'
import { asForeignKey } from '../type/field-types'
import type { GraphqlTypes } from '../type/registry'
import { namingFields } from './input-errors'
import { manyRelationMutationFields } from './relation-input'

/** Whether links can be made and unmade: the join resource's create and remove are enabled. */
export function linkable(join: ResolvedJoin) {
  const { definition } = join.resource
  return !definition.create?.disabled && !definition.delete?.disabled
}

/** Which of `ids` name records of `target` the caller may read, as the target's ids (one `find`). */
async function readableIds(context: GraphqlContext, target: ResolvedResource, ids: unknown[]) {
  if (ids.length === 0) return new Set<string>()
  const id = target.idField
  const records = (await context
    .service(target)
    .find(
      context.params({ filter: { [id.name]: { in: ids as Scalar[] } }, select: [id.name] })
    )) as ResourceRecord[]
  return new Set(records.map((record) => String(record[id.name])))
}

/**
 * `add<Relation>To<R>`, `set<Relation>On<R>` and `remove<Relation>From<R>` for a many-to-many relation: links
 * are the join resource's records, made with its `create` and unmade with its `remove` (one call per link), so
 * its guards, hooks, `authorize` and Feathers events (`created`, `removed`) apply. Every named record must be
 * readable by the caller (NOT_FOUND otherwise, nothing changed). Adding a link that exists and removing one
 * that does not change nothing; `set` unlinks only the records the caller may read.
 */
export function linkMutationFields(
  types: GraphqlTypes,
  resource: ResolvedResource,
  relation: ResolvedManyToManyRelation
): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  const { target, through } = relation
  const join = through.resource
  const joinId = join.idField.name
  const parentKey = through.foreignKey
  const otherKey = through.otherKey

  /** The input's ids as the join stores them, each naming a record the caller may read. */
  const targets = async (context: GraphqlContext, ids: string[]) => {
    const keys = ids.map((id) => asForeignKey(otherKey, id))
    const readable = await readableIds(context, target, keys)
    keys.forEach((key, index) => {
      if (!readable.has(String(key))) throw new NotFound(`No ${target.name} found for id '${ids[index]}'`)
    })
    return keys
  }
  /** The parent's links (to `keys` only, when given), at most the join's `maxMulti`. */
  const links = async (context: GraphqlContext, parentId: unknown, keys?: unknown[]) => {
    const max = maxMultiOf(join)
    const filter: Filter = { [parentKey.name]: { eq: asForeignKey(parentKey, parentId) } }
    if (keys) filter[otherKey.name] = { in: keys as Scalar[] }
    const page = (await context
      .service(join)
      .find(context.params({ filter, select: [joinId, otherKey.name], paging: { limit: max } }))) as {
      data: ResourceRecord[]
      hasNextPage: boolean
    }
    if (page.hasNextPage) {
      throw badField('input.id', `has more than ${max} ${relation.name}; change them with add and remove`)
    }
    return page.data
  }
  const unlink = async (context: GraphqlContext, records: ResourceRecord[]) => {
    for (const record of records) {
      await context.service(join).remove(record[joinId] as string, context.params())
    }
  }

  const add = async (context: GraphqlContext, parentId: unknown, ids: string[]) => {
    const keys = await targets(context, ids)
    const linked = new Set(
      (await links(context, parentId, keys)).map((record) => String(record[otherKey.name]))
    )
    for (const [index, key] of keys.entries()) {
      if (linked.has(String(key))) continue
      linked.add(String(key))
      const data = { [parentKey.name]: asForeignKey(parentKey, parentId), [otherKey.name]: key }
      // Whatever the join resource refuses in the link is wrong with that id of the input.
      await namingFields(
        () => `input.relationIds.${index}`,
        () => context.service(join).create(data, context.params())
      )
    }
  }
  const remove = async (context: GraphqlContext, parentId: unknown, ids: string[]) => {
    await unlink(context, await links(context, parentId, await targets(context, ids)))
  }
  const set = async (context: GraphqlContext, parentId: unknown, ids: string[]) => {
    const kept = new Set((await targets(context, ids)).map(String))
    const others = (await links(context, parentId)).filter(
      (record) => !kept.has(String(record[otherKey.name]))
    )
    // Links to records the caller cannot read stay: the caller neither sees nor names them.
    const readable = await readableIds(
      context,
      target,
      others.map((record) => record[otherKey.name])
    )
    await unlink(
      context,
      others.filter((record) => readable.has(String(record[otherKey.name])))
    )
    await add(context, parentId, ids)
  }
  return manyRelationMutationFields(types, resource, relation, join, { add, set, remove })
}
