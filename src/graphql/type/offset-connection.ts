import {
  GraphQLBoolean,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType
} from 'graphql'
import { badInput, type FieldError } from '../../common/errors'
import type { PageSizes } from '../../resource/resolved'
import type { Page } from '../../model/page'
import type { ResourceRecord } from '../../model/records'
import { pageSize, present, type PageWindow } from './cursor'
import type { GraphqlTypes } from './registry'

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
  totalCountIsEstimate: boolean
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

/** The page of an offset connection: page flags and the records as `nodes`. */
export function offsetPage(types: GraphqlTypes, node: () => GraphQLObjectType) {
  return {
    pageInfo: { type: new GraphQLNonNull(offsetPageInfoType(types)), description: 'Paging information.' },
    nodes: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(node()))) }
  }
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
    totalCount: page.total,
    totalCountIsEstimate: page.totalIsEstimate === true
  }
}
