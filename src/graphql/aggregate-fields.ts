import {
  GraphQLList,
  GraphQLNonNull,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap
} from 'graphql'
import { ConfigurationError } from '../errors'
import { upperFirst } from '../resource/naming'
import type { ResolvedManyRelation, ResolvedResource } from '../resource/resolve'
import type { AggregateResponse } from '../query/model'
import type { ResourceRecord } from '../service/resource-service'
import { aggregateRequestOf } from './aggregate-request'
import { aggregateResponseType, type AggregateResponseOptions } from './aggregate-types'
import type { GraphqlContext } from './context'
import { filterInputType, filterIsRequired, toFilter } from './filter-input'
import type { GraphqlSchemaPart, GraphqlTypes } from './types'
import { withWork } from './field-work'
import { aggregateBatchSize } from './loaders'

/** `[<Prefix>AggregateResponse!]!`: one entry per group, or exactly one without groupBy. */
function responseListType(
  types: GraphqlTypes,
  resource: ResolvedResource,
  options: AggregateResponseOptions
) {
  return new GraphQLNonNull(
    new GraphQLList(new GraphQLNonNull(aggregateResponseType(types, resource, options)))
  )
}

/**
 * `filter: <Resource>AggregateFilter`, optional unless a field of the resource is `filterRequired`: then it
 * is required as the collection filter is, so that no aggregate escapes the filter the resource insists on.
 */
function filterArgs(types: GraphqlTypes, resource: ResolvedResource): GraphQLFieldConfigArgumentMap {
  const filter = filterInputType(types, resource, { name: `${resource.name}AggregateFilter` })
  const description = 'Which records to aggregate; all of them when absent.'
  return { filter: { type: filterIsRequired(resource) ? new GraphQLNonNull(filter) : filter, description } }
}

/** `todoItemAggregate(filter)`: one `aggregate` call on the resource's service, so every hook applies. */
function rootAggregateField(
  types: GraphqlTypes,
  resource: ResolvedResource
): GraphQLFieldConfig<unknown, GraphqlContext> {
  return withWork(
    {
      type: responseListType(types, resource, { prefix: resource.name, dateBuckets: true }),
      args: filterArgs(types, resource),
      description: `Count, sum, average, minimum and maximum of ${resource.name} fields, optionally grouped.`,
      resolve(_source, args, context, info): Promise<AggregateResponse[]> {
        const request = aggregateRequestOf(info)
        const filter = toFilter(resource, args.filter)
        return context.service(resource).aggregate(request, context.params({ filter }))
      }
    },
    { statements: 'once', maxGroups: resource.maxAggregateGroups }
  )
}

/**
 * `subTasksAggregate(filter)` on the parent: aggregates of the parent's related records only, all parents
 * of the request that ask the same in one partitioned statement.
 */
function relationAggregateField(
  types: GraphqlTypes,
  resource: ResolvedResource,
  relation: ResolvedManyRelation
): GraphQLFieldConfig<ResourceRecord, GraphqlContext> {
  const { target } = relation
  const prefix = `${resource.name}${upperFirst(relation.name)}`
  return withWork(
    {
      type: responseListType(types, target, { prefix, dateBuckets: false }),
      args: filterArgs(types, target),
      description: `Aggregates of this ${resource.name}'s ${relation.name}.`,
      resolve(parent, args, context, info) {
        const request = aggregateRequestOf(info)
        const filter = toFilter(target, args.filter)
        return context.loaders.aggregate(relation, request, filter).load(parent[resource.idField.name])
      }
    },
    { statements: 'batched', batchSize: aggregateBatchSize(target), maxGroups: target.maxAggregateGroups }
  )
}

/**
 * Aggregate queries: `<singular>Aggregate` for every resource with `enableAggregate` or `aggregate.enabled`,
 * `<relation>Aggregate` on the parent type for every many-relation whose aggregates are on (the parent's
 * `enableAggregate`, unless the relation says `enableAggregate: false`).
 */
export const aggregateSchemaPart: GraphqlSchemaPart = {
  objectFieldsReadOnlyId: true,
  queryFields(resource, types) {
    if (!resource.aggregateEnabled) return {}
    return { [`${resource.singular}Aggregate`]: rootAggregateField(types, resource) }
  },
  objectFields(resource, types) {
    const fields: GraphQLFieldConfigMap<ResourceRecord, GraphqlContext> = {}
    for (const relation of resource.many) {
      if (!relation.aggregate) continue
      const name = `${relation.name}Aggregate`
      if (
        resource.fieldMap.has(name) ||
        [...resource.many, ...resource.one].some((other) => other.name === name)
      ) {
        throw new ConfigurationError(`${resource.name}.${name} is both a field and a relation aggregate`)
      }
      fields[name] = relationAggregateField(types, resource, relation)
    }
    return fields
  }
}
