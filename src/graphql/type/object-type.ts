import {
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLResolveInfo
} from 'graphql'
import { upperFirst } from '../../resource/naming'
import { serializedFields, type ResolvedManyRelation, type ResolvedOneRelation, type ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { collectionArgs, collectionRequest, type CollectionRequest } from '../fields/collection-args'
import { collectionResult, collectionType } from '../fields/collection'
import type { GraphqlContext } from '../fields/context'
import { fieldScalar } from './field-types'
import { markIdOnlyFields, selectedRecordFields } from '../fields/selection'
import type { GraphqlTypes } from './registry'
import { collectionWork, withWork } from './field-work'
import { MAX_BATCH } from '../fields/loaders'

type FieldConfig = GraphQLFieldConfig<ResourceRecord, GraphqlContext>

type FieldNodes = GraphQLResolveInfo['fieldNodes']

/** The last request each relation field made, by the JSON of its arguments. */
const lastRequests = new WeakMap<FieldNodes, { args: string; request: CollectionRequest }>()

/**
 * The relation field resolves once per parent, with the same arguments for every parent of a page: the request
 * (filter, sorting and window checked, selection read) is worked out once and shared. Within one execution a
 * field's arguments cannot differ between parents (they come from its nodes and the operation's variables), so
 * the parents after the first find it by the field's nodes alone; across executions the same document's field
 * finds the last request it made when its arguments' JSON is the same. One slot per field, so nothing
 * accumulates across requests.
 */
function sameRequest(context: GraphqlContext, info: GraphQLResolveInfo, args: unknown, build: () => CollectionRequest) {
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
      type: collectionType(types, { paging, name, target, node: () => objectType(types, target) }),
      args: collectionArgs(types, target, paging),
      async resolve(parent, args, context, info) {
        const request = sameRequest(context, info, args, () =>
          collectionRequest(target, args, info, { paging, connection: name })
        )
        const page = await context.loaders.many(relation, request).load(parent[resource.idField.name])
        return collectionResult(target, page, request)
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
 * The object type of a resource: its serialized fields (not filterOnly or hidden ones), the id as `ID`,
 * nullability from the field, then its relations and whatever schema parts add.
 */
export function objectType(types: GraphqlTypes, resource: ResolvedResource): GraphQLObjectType {
  return types.named(
    resource.name,
    () =>
      new GraphQLObjectType<ResourceRecord, GraphqlContext>({
        name: resource.name,
        description: resource.definition.schema.description,
        fields: () => {
          const fields: GraphQLFieldConfigMap<ResourceRecord, GraphqlContext> = {}
          for (const field of serializedFields(resource)) {
            const scalar = fieldScalar(types, field)
            fields[field.name] = {
              type: field.nullable ? scalar : new GraphQLNonNull(scalar),
              description: field.description
            }
          }
          const idOnly = new Set<string>()
          for (const relation of resource.many) {
            fields[relation.name] = manyRelationField(types, resource, relation)
            idOnly.add(relation.name)
          }
          for (const relation of resource.one) fields[relation.name] = oneRelationField(types, relation)
          for (const part of types.parts) {
            const added = part.objectFields?.(resource, types) ?? {}
            Object.assign(fields, added)
            if (part.objectFieldsReadOnlyId) for (const name of Object.keys(added)) idOnly.add(name)
          }
          markIdOnlyFields(resource, idOnly)
          return fields
        }
      })
  )
}
