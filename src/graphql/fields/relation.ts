import type { GraphQLFieldConfig, GraphQLFieldConfigMap, GraphQLResolveInfo } from 'graphql'
import { upperFirst } from '../../resource/naming'
import type { ResolvedManyRelation, ResolvedOneRelation, ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { objectType } from '../type/object-type'
import type { GraphqlTypes } from '../type/registry'
import { collectionWork, withWork } from '../type/field-work'
import { collectionArgs, pageRequest, type PageRequest } from './collection-args'
import { collectionResult, collectionType } from './collection'
import { withAggregateScope } from './connection-aggregate'
import type { GraphqlContext } from './context'
import { MAX_BATCH } from './loaders'
import { relationMutationFields } from './relation-mutation'
import type { GraphqlSchemaPart } from './schema-part'
import { selectedRecordFields } from './selection'

type FieldConfig = GraphQLFieldConfig<ResourceRecord, GraphqlContext>

type FieldNodes = GraphQLResolveInfo['fieldNodes']

/** The last request each relation field made, by the JSON of its arguments. */
const lastRequests = new WeakMap<FieldNodes, { args: string; request: PageRequest }>()

/**
 * The relation field resolves once per parent, with the same arguments for every parent of a page: the request
 * (filter, sorting and window checked, selection read) is worked out once and shared. Within one execution a
 * field's arguments cannot differ between parents (they come from its nodes and the operation's variables), so
 * the parents after the first find it by the field's nodes alone; across executions the same document's field
 * finds the last request it made when its arguments' JSON is the same. One slot per field, so nothing
 * accumulates across requests.
 */
function sameRequest(
  context: GraphqlContext,
  info: GraphQLResolveInfo,
  args: unknown,
  build: () => PageRequest
) {
  // Kept by the execution's loaders, which a subscription makes anew for each event.
  const requests = context.loaders.fieldRequests
  let request = requests.get(info.fieldNodes)
  if (request) return request
  const json = JSON.stringify(args)
  const last = lastRequests.get(info.fieldNodes)
  if (last && last.args === json) request = last.request
  else {
    request = build()
    lastRequests.set(info.fieldNodes, { args: json, request })
  }
  requests.set(info.fieldNodes, request)
  return request
}

/**
 * `subTasks(paging, filter, sorting): TodoItemSubTasksConnection!` (a plain list with paging strategy NONE),
 * loaded for all parents at once.
 */
function manyRelationField(
  types: GraphqlTypes,
  resource: ResolvedResource,
  relation: ResolvedManyRelation
): FieldConfig {
  const { target, paging } = relation
  // One name whatever the strategy, as nestjs-query names relation connections.
  const name = `${resource.name}${upperFirst(relation.name)}Connection`
  return withWork(
    {
      type: collectionType(types, {
        paging,
        name,
        target,
        node: () => objectType(types, target),
        aggregate: relation.aggregate ? { target, parent: resource, relation } : undefined
      }),
      args: collectionArgs(types, target, paging),
      async resolve(parent, args, context, info) {
        const request = sameRequest(context, info, args, () =>
          pageRequest(target, args, info, { paging, connection: name })
        )
        const id = parent[resource.idField.name]
        const page = await context.loaders.many(relation, request).load(id)
        return withAggregateScope(collectionResult(target, page, request), {
          filter: request.filter,
          parent: { relation, id }
        })
      }
    },
    collectionWork({ statements: 'batched', batchSize: MAX_BATCH }, target, paging)
  )
}

/**
 * `todoItem: TodoItem`, loaded for all children at once. Always nullable: the parent may be outside what the
 * caller may see (authorize, defaultFilter, soft delete), and that must not fail the whole child.
 */
function oneRelationField(types: GraphqlTypes, relation: ResolvedOneRelation): FieldConfig {
  return withWork(
    {
      type: objectType(types, relation.target),
      resolve(parent, _args, context, info) {
        const id = parent[relation.foreignKey.name]
        if (id === null || id === undefined) return null
        return context.loaders.one(relation, selectedRecordFields(info, relation.target, [])).load(id)
      }
    },
    { statements: 'batched', batchSize: MAX_BATCH }
  )
}

/**
 * Relations: on each object type its many-relations, then its one-relations, loaded in batches; and the
 * mutations nestjs-query generates to change them.
 */
export const relationSchemaPart: GraphqlSchemaPart = {
  name: 'relations',
  // Many-relations read the parent's id. One-relations read their foreign key, which `selectedRecordFields`
  // adds for every selected one-relation before it asks this.
  objectFieldsReadOnlyId: true,
  objectFields(resource, types) {
    const fields: GraphQLFieldConfigMap<ResourceRecord, GraphqlContext> = {}
    for (const relation of resource.many) fields[relation.name] = manyRelationField(types, resource, relation)
    for (const relation of resource.one) fields[relation.name] = oneRelationField(types, relation)
    return fields
  },
  mutationFields: (resource, types) => relationMutationFields(types, resource)
}
