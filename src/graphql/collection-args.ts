import {
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLResolveInfo
} from 'graphql'
import { pageSizes, type PageSizes, type ResolvedResource } from '../resource/resolve'
import type { Filter, SortField } from '../query/model'
import { pageWindow, type CursorPaging, type PageWindow } from './cursor'
import { connectionCursorType } from './field-types'
import { filterInputType, filterIsRequired, toFilter } from './filter-input'
import { selectedRecordFields, selectsField } from './selection'
import { sortInputType, toSorting } from './sort-input'
import type { GraphqlTypes } from './types'

export const GRAPHQL_DEFAULT_RESULT_SIZE = 10

export function cursorPagingType(types: GraphqlTypes) {
  return types.named('CursorPaging', () => {
    const cursor = connectionCursorType(types)
    return new GraphQLInputObjectType({
      name: 'CursorPaging',
      description: 'Forward paging with first/after, backward paging with last/before.',
      fields: {
        before: { type: cursor, description: 'Page backwards from this cursor.' },
        after: { type: cursor, description: 'Page forwards from this cursor.' },
        first: { type: GraphQLInt, description: 'Number of records after `after` (or from the start).' },
        last: { type: GraphQLInt, description: 'Number of records before `before`.' }
      }
    })
  })
}

/** A resource's page sizes in GraphQL. */
export function graphqlPageSizes(resource: ResolvedResource): PageSizes {
  return pageSizes(resource, GRAPHQL_DEFAULT_RESULT_SIZE)
}

/**
 * `paging`, `filter` and `sorting` of a collection or relation connection. The filter becomes non-null without
 * a default when a field of the resource is `filterRequired`.
 */
export function collectionArgs(
  types: GraphqlTypes,
  resource: ResolvedResource
): GraphQLFieldConfigArgumentMap {
  const filter = filterInputType(types, resource)
  return {
    paging: {
      type: cursorPagingType(types),
      defaultValue: { first: graphqlPageSizes(resource).default },
      description: 'Which page of records to return.'
    },
    filter: filterIsRequired(resource)
      ? { type: new GraphQLNonNull(filter), description: 'Which records to return.' }
      : { type: filter, defaultValue: {}, description: 'Which records to return.' },
    sorting: {
      type: new GraphQLList(new GraphQLNonNull(sortInputType(types, resource))),
      defaultValue: [],
      description: 'Order of the records; the resource default order when empty.'
    }
  }
}

/** A connection request in the query model. */
export interface CollectionRequest {
  filter?: Filter
  sorting: SortField[]
  window: PageWindow
  /** Count the matching records: only when the resource offers `totalCount` and the client selected it. */
  totalCount: boolean
  /** The record fields the client's selection of `edges.node` reads (undefined: all of them). */
  select?: string[]
}

export function collectionRequest(
  resource: ResolvedResource,
  args: Record<string, unknown>,
  info: GraphQLResolveInfo
): CollectionRequest {
  return {
    filter: toFilter(resource, args.filter),
    sorting: toSorting(args.sorting),
    window: pageWindow(args.paging as CursorPaging | null, graphqlPageSizes(resource)),
    totalCount: resource.query.enableTotalCount && selectsField(info, 'totalCount'),
    select: selectedRecordFields(info, resource, ['edges', 'node'])
  }
}
