import {
  GraphQLBoolean,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap
} from 'graphql'
import { ConfigurationError } from '../../common/errors'
import { upperFirst } from '../../resource/naming'
import type { ResolvedManyRelation, ResolvedResource } from '../../resource/resolved'
import type {
  AggregatePage,
  AggregateRequest,
  AggregateResponse,
  AggregateSortField
} from '../../model/aggregate'
import type { ResourceRecord } from '../../model/records'
import { aggregateRequestOf, selectsMember } from './aggregate-request'
import { aggregatePagingType, aggregateSortType, havingInputType } from '../type/aggregate-inputs'
import { sortKeyOf } from '../type/sort-input'
import { aggregateResponseType, type AggregateResponseOptions } from '../type/aggregate-types'
import type { GraphqlContext } from './context'
import { filterInputType, filterIsRequired, toFilter } from '../type/filter-input'
import type { GraphqlTypes } from '../type/registry'
import type { GraphqlSchemaPart } from './schema-part'
import { withWork } from '../type/field-work'
import { aggregateBatchSize } from './loaders'
import { copyWith } from '../../common/copy-with'

/** `[<Prefix>AggregateResponse!]!`: one entry per group, or exactly one without groupBy. */
export function responseListType(
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
 * Then `having`, `sorting` and `paging` of the groups.
 */
export function aggregateArgs(
  types: GraphqlTypes,
  resource: ResolvedResource
): GraphQLFieldConfigArgumentMap {
  const filter = filterInputType(types, resource, { name: `${resource.name}AggregateFilter` })
  return {
    filter: {
      type: filterIsRequired(resource) ? new GraphQLNonNull(filter) : filter,
      description: 'Which records to aggregate; all of them when absent.'
    },
    having: {
      type: havingInputType(types, resource),
      description: 'Which groups to answer, by their aggregates.'
    },
    sorting: {
      type: new GraphQLList(new GraphQLNonNull(aggregateSortType(types, resource))),
      description: 'The order of the groups; then, and by default, the group keys ascending.'
    },
    paging: { type: aggregatePagingType(types), description: 'One page of the groups.' }
  }
}

/** The GraphQL arguments as the request's `having`, `sorting` and `paging` (the selection gives the rest). */
export function argsRequest(
  args: Record<string, unknown>
): Pick<AggregateRequest, 'having' | 'sorting' | 'paging'> {
  const request: Pick<AggregateRequest, 'having' | 'sorting' | 'paging'> = {}
  if (args.having) request.having = args.having as AggregateRequest['having']
  if (Array.isArray(args.sorting) && args.sorting.length) {
    type Entry = AggregateSortField & { path?: string | null }
    request.sorting = args.sorting.map(({ field, path, aggregate, direction, nulls }: Entry, index) => ({
      field: sortKeyOf({ field, path }, index),
      direction,
      ...(aggregate ? { aggregate } : {}),
      ...(nulls ? { nulls } : {})
    }))
  }
  if (args.paging) {
    const { limit, offset } = args.paging as { limit?: number | null; offset?: number | null }
    request.paging = {
      ...(limit === null || limit === undefined ? {} : { limit }),
      ...(offset ? { offset } : {})
    }
  }
  return request
}

/** `todoItemAggregate(filter, having, sorting, paging)`: one `aggregate` call on the resource's service. */
function rootAggregateField(
  types: GraphqlTypes,
  resource: ResolvedResource
): GraphQLFieldConfig<unknown, GraphqlContext> {
  return withWork(
    {
      type: responseListType(types, resource, { prefix: resource.name, fill: true }),
      args: aggregateArgs(types, resource),
      description: `Count, distinct count, sum, average, minimum and maximum of ${resource.name} fields, optionally grouped, filtered by their aggregates, ordered and paged.`,
      async resolve(_source, args, context, info): Promise<AggregateResponse[]> {
        const request = copyWith(aggregateRequestOf(info), argsRequest(args))
        const filter = toFilter(resource, args.filter)
        const result = await context.service(resource).aggregate(request, context.params({ filter }))
        return Array.isArray(result) ? result : (result as AggregatePage).data
      }
    },
    { statements: 'once', maxGroups: resource.maxAggregateGroups }
  )
}

/** `AggregatePageInfo {hasNextPage hasPreviousPage}`: where a page of groups lies. */
function aggregatePageInfoType(types: GraphqlTypes) {
  return types.named(
    'AggregatePageInfo',
    () =>
      new GraphQLObjectType({
        name: 'AggregatePageInfo',
        fields: {
          hasNextPage: {
            type: new GraphQLNonNull(GraphQLBoolean),
            description: 'More groups follow this page.'
          },
          hasPreviousPage: {
            type: new GraphQLNonNull(GraphQLBoolean),
            description: 'Groups precede this page.'
          }
        }
      })
  )
}

/** `<Resource>AggregateGroups {nodes pageInfo totalCount}`: a page of groups and how many there are. */
function groupsPageType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}AggregateGroups`
  return types.named(
    name,
    () =>
      new GraphQLObjectType({
        name,
        fields: {
          nodes: { type: responseListType(types, resource, { prefix: resource.name, fill: true }) },
          pageInfo: { type: new GraphQLNonNull(aggregatePageInfoType(types)) },
          totalCount: {
            type: new GraphQLNonNull(GraphQLInt),
            description: 'The number of groups of all pages.'
          }
        }
      })
  )
}

/**
 * `todoItemAggregateGroups(filter, having, sorting, paging)`: the same groups as a page with its page info
 * and, when selected, the number of groups (counted in the same statement). Without `paging`, the first
 * maxGroups groups.
 */
function rootGroupsField(
  types: GraphqlTypes,
  resource: ResolvedResource
): GraphQLFieldConfig<unknown, GraphqlContext> {
  return withWork(
    {
      type: new GraphQLNonNull(groupsPageType(types, resource)),
      args: aggregateArgs(types, resource),
      description: `A page of ${resource.name} aggregate groups, with the number of groups.`,
      async resolve(_source, args, context, info) {
        const asked = copyWith(aggregateRequestOf(info), argsRequest(args))
        const request = copyWith(asked, {
          paging: asked.paging ?? {},
          totalCount: selectsMember(info, 'totalCount')
        })
        const filter = toFilter(resource, args.filter)
        const page = await context.service(resource).aggregate(request, context.params({ filter }))
        return {
          nodes: page.data,
          pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: page.skip > 0 },
          totalCount: page.total
        }
      }
    },
    { statements: 'once', maxGroups: resource.maxAggregateGroups }
  )
}

/**
 * `subTasksAggregate(filter, having, sorting, paging)` on the parent: aggregates of the parent's related
 * records only (paging pages each parent's groups), all parents of the request that ask the same in one
 * partitioned statement.
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
      type: responseListType(types, target, { prefix, fill: false }),
      args: aggregateArgs(types, target),
      description: `Aggregates of this ${resource.name}'s ${relation.name}.`,
      resolve(parent, args, context, info) {
        const request = copyWith(aggregateRequestOf(info), argsRequest(args))
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
  name: 'aggregates',
  objectFieldsReadOnlyId: true,
  queryFields(resource, types) {
    if (!resource.aggregateEnabled) return {}
    return {
      [`${resource.singular}Aggregate`]: rootAggregateField(types, resource),
      [`${resource.singular}AggregateGroups`]: rootGroupsField(types, resource)
    }
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
