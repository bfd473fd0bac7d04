import {
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLResolveInfo
} from 'graphql'
import { badInput, type FieldError } from '../../common/errors'
import {
  pageSizes,
  type PageSizes,
  type ResolvedPaging,
  type ResolvedResource
} from '../../resource/resolved'
import type { Filter, Keyset, SortField } from '../../model/query'
import { pageWindow, type CursorPaging, type PageWindow } from '../type/cursor'
import { keysetScope, keysetWindow } from '../type/keyset-cursor'
import { offsetPagingType, offsetWindow, type OffsetPagingInput } from '../type/offset-connection'
import { connectionCursorType } from '../type/field-types'
import { filterInputType, filterIsRequired, toFilter } from '../type/filter-input'
import { selectedRecordFields, selectsField } from './selection'
import { sortInputType, toSorting } from '../type/sort-input'
import type { GraphqlTypes } from '../type/registry'
import { GRAPHQL_DEFAULT_RESULT_SIZE } from '../../resource/defaults'

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

/** The `paging` argument of a collection paged by `strategy`; none for NONE. */
function pagingArg(types: GraphqlTypes, resource: ResolvedResource, paging: ResolvedPaging) {
  const size = graphqlPageSizes(resource).default
  const description = 'Which page of records to return.'
  if (paging.strategy === 'offset') {
    return { type: offsetPagingType(types), defaultValue: { limit: size }, description }
  }
  if (paging.strategy === 'cursor') {
    return { type: cursorPagingType(types), defaultValue: { first: size }, description }
  }
  return undefined
}

/**
 * `paging` (as the strategy has it), `filter` and `sorting` of a collection or relation connection. The
 * filter becomes non-null without a default when a field of the resource is `filterRequired`.
 */
export function collectionArgs(
  types: GraphqlTypes,
  resource: ResolvedResource,
  paging: ResolvedPaging = resource.graphqlPaging
): GraphQLFieldConfigArgumentMap {
  const filter = filterInputType(types, resource)
  const pagingArgument = pagingArg(types, resource, paging)
  return {
    ...(pagingArgument ? { paging: pagingArgument } : {}),
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

/**
 * What a collection field (root or relation) asks the service for: the page of records its arguments and
 * selection name, in the query model.
 */
export interface PageRequest {
  strategy: ResolvedPaging['strategy']
  filter?: Filter
  sorting: SortField[]
  /** The records to read: the page's offset and size (NONE: as many as a list may hold, `maxResultsSize`). */
  window: PageWindow
  /** Keyset cursors: where the page starts or ends, and what the cursors belong to. */
  keyset?: Keyset
  cursorScope?: string
  /** Count the matching records: only when the resource offers `totalCount` and the client selected it. */
  totalCount: boolean
  /** The record fields the client's selection of the records reads (undefined: all of them). */
  select?: string[]
}

/**
 * A keyset cursor carries the values of the sort fields, which clients can read: sorting by a field that never
 * leaves the server (filterOnly) is refused rather than given away in cursors.
 */
function checkKeysetSorting(resource: ResolvedResource, sorting: SortField[]) {
  const errors: FieldError[] = []
  sorting.forEach((sort, index) => {
    if (resource.fieldMap.get(sort.field)?.serialized !== false) return
    const message = `${sort.field} is filterOnly: keyset cursors would carry its values`
    errors.push({ field: `sorting.${index}.field`, message })
  })
  if (errors.length) throw badInput(errors)
}

/** Where the records are in a collection's selection, by strategy. */
const RECORDS_AT: Record<ResolvedPaging['strategy'], string[]> = {
  cursor: ['edges', 'node'],
  offset: ['nodes'],
  none: []
}

/**
 * The request of a collection field named `connection` (the type name, which keyset cursors belong to) of
 * `resource` records paged as `paging` says.
 */
export function pageRequest(
  resource: ResolvedResource,
  args: Record<string, unknown>,
  info: GraphQLResolveInfo,
  { paging = resource.graphqlPaging, connection }: { paging?: ResolvedPaging; connection: string }
): PageRequest {
  const filter = toFilter(resource, args.filter)
  const sorting = toSorting(args.sorting)
  const sizes = graphqlPageSizes(resource)
  const request: PageRequest = {
    strategy: paging.strategy,
    filter,
    sorting,
    window: { offset: 0, limit: sizes.max },
    totalCount:
      paging.strategy !== 'none' && resource.query.enableTotalCount && selectsField(info, 'totalCount'),
    select: selectedRecordFields(info, resource, RECORDS_AT[paging.strategy])
  }
  if (paging.strategy === 'offset') {
    request.window = offsetWindow(args.paging as OffsetPagingInput | null, sizes)
  } else if (paging.strategy === 'cursor' && paging.keyset) {
    checkKeysetSorting(resource, sorting)
    const scope = keysetScope(connection, sorting, filter)
    const { limit, keyset } = keysetWindow(args.paging as CursorPaging | null, sizes, scope)
    Object.assign(request, { window: { offset: 0, limit }, keyset, cursorScope: scope })
  } else if (paging.strategy === 'cursor') {
    request.window = pageWindow(args.paging as CursorPaging | null, sizes)
  }
  return request
}
