import {
  GraphQLBoolean,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType
} from 'graphql'
import { badInput, type FieldError } from '../errors'
import type { PageSizes } from '../resource/resolve'
import type { Page } from '../query/model'
import type { ResourceRecord } from '../service/resource-service'
import { pageSize, present, type PageWindow } from './cursor'
import { withWork } from './field-work'
import type { GraphqlTypes } from './types'

/**
 * The OFFSET paging strategy, with nestjs-query's names and shapes: `paging: OffsetPaging = {limit: 10}` and
 * `<Resource>OffsetConnection {pageInfo: OffsetPageInfo!, nodes: [<Resource>!]!, totalCount}`.
 */

export interface OffsetPagingInput {
  limit?: number | null
  offset?: number | null
}

/** What an offset connection field resolves to. */
export interface OffsetConnection {
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean }
  nodes: ResourceRecord[]
  totalCount?: number
}

export function offsetPagingType(types: GraphqlTypes) {
  return types.named(
    'OffsetPaging',
    () =>
      new GraphQLInputObjectType({
        name: 'OffsetPaging',
        description: 'A page of `limit` records after skipping `offset` of them.',
        fields: {
          limit: { type: GraphQLInt, description: 'Number of records (the default page size when absent).' },
          offset: { type: GraphQLInt, description: 'Number of records skipped (0 when absent).' }
        }
      })
  )
}

export function offsetPageInfoType(types: GraphqlTypes) {
  return types.named(
    'OffsetPageInfo',
    () =>
      new GraphQLObjectType({
        name: 'OffsetPageInfo',
        fields: {
          hasNextPage: { type: GraphQLBoolean, description: 'More records follow this page.' },
          hasPreviousPage: { type: GraphQLBoolean, description: 'Records precede this page (offset > 0).' }
        }
      })
  )
}

/**
 * An offset connection named `name` (`TodoItemOffsetConnection`, or `TodoItemSubTasksConnection` for a
 * relation, as nestjs-query names them). `totalCount` as in cursor connections: when the target enables it,
 * counted when selected, apart (`countedApart`, a root connection) or in the page's statement (relations).
 */
export function offsetConnectionType(
  types: GraphqlTypes,
  name: string,
  enableTotalCount: boolean,
  node: () => GraphQLObjectType,
  { countedApart = false } = {}
) {
  const totalCount = {
    type: new GraphQLNonNull(GraphQLInt),
    description: 'Number of records matching the filter (costs a count, so only when selected).'
  }
  return types.named(
    name,
    () =>
      new GraphQLObjectType<OffsetConnection>({
        name,
        fields: () => ({
          pageInfo: { type: new GraphQLNonNull(offsetPageInfoType(types)), description: 'Paging information.' },
          nodes: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(node()))) },
          ...(enableTotalCount
            ? { totalCount: countedApart ? withWork(totalCount, { statements: 'once' }) : totalCount }
            : {})
        })
      })
  )
}

/** The window `paging: {limit, offset}` asks for: a limit of 1 to the maximum, a non-negative offset. */
export function offsetWindow(paging: OffsetPagingInput | null | undefined, sizes: PageSizes): PageWindow {
  const errors: FieldError[] = []
  const limit = pageSize(paging?.limit, 'paging.limit', sizes, errors)
  const offset = paging?.offset
  if (present(offset) && (!Number.isSafeInteger(offset) || offset < 0)) {
    errors.push({ field: 'paging.offset', message: 'must be a non-negative integer' })
  }
  if (errors.length) throw badInput(errors)
  return { limit, offset: offset ?? 0 }
}

export function toOffsetConnection(page: Page<ResourceRecord>, window: PageWindow): OffsetConnection {
  return {
    pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: window.offset > 0 },
    nodes: page.data,
    totalCount: page.total
  }
}
