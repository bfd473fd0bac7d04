import {
  GraphQLBoolean,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLFieldConfigMap
} from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import type { Page } from '../../model/page'
import type { ResourceRecord } from '../../model/records'
import { encodeCursor, type PageWindow } from './cursor'
import { encodeKeysetCursor } from './keyset-cursor'
import { connectionCursorType } from './field-types'
import type { GraphqlTypes } from './registry'
import { withWork } from './field-work'

export interface Edge {
  node: ResourceRecord
  cursor: string
}

/** What a connection field resolves to. */
export interface Connection {
  pageInfo: {
    hasNextPage: boolean
    hasPreviousPage: boolean
    startCursor: string | null
    endCursor: string | null
  }
  edges: Edge[]
  totalCount?: number
  totalCountIsEstimate: boolean
}

export function pageInfoType(types: GraphqlTypes) {
  return types.named(
    'PageInfo',
    () =>
      new GraphQLObjectType({
        name: 'PageInfo',
        fields: {
          hasNextPage: { type: GraphQLBoolean, description: 'More records follow this page.' },
          hasPreviousPage: { type: GraphQLBoolean, description: 'Records precede this page.' },
          startCursor: {
            type: connectionCursorType(types),
            description: 'Cursor of the first record of the page.'
          },
          endCursor: {
            type: connectionCursorType(types),
            description: 'Cursor of the last record of the page.'
          }
        }
      })
  )
}

/** `<Resource>Edge {node cursor}`, shared by the root connection and every relation connection to it. */
export function edgeType(types: GraphqlTypes, target: ResolvedResource, node: () => GraphQLObjectType) {
  const name = `${target.name}Edge`
  return types.named(
    name,
    () =>
      new GraphQLObjectType({
        name,
        fields: () => ({
          node: { type: new GraphQLNonNull(node()) },
          cursor: {
            type: new GraphQLNonNull(connectionCursorType(types)),
            description: 'Cursor of this record.'
          }
        })
      })
  )
}

/**
 * A connection type named `name`: `page` (its page info and records, edges or nodes), then `totalCount` when
 * the target offers it, counted only when selected: by a statement of its own when `countedApart` (a root
 * connection), else in the statement of the page (relations); then the fields `beside` the page, if any
 * (its `aggregate`).
 */
export function pagedType<Context>(
  types: GraphqlTypes,
  name: string,
  target: ResolvedResource,
  page: () => GraphQLFieldConfigMap<unknown, Context>,
  countedApart: boolean,
  beside?: () => GraphQLFieldConfigMap<unknown, Context>
) {
  const totalCount = {
    type: new GraphQLNonNull(GraphQLInt),
    description: 'Number of records matching the filter (costs a count, so only when selected).'
  }
  return types.named(
    name,
    () =>
      new GraphQLObjectType({
        name,
        fields: () => ({
          ...page(),
          ...(target.query.enableTotalCount
            ? { totalCount: countedApart ? withWork(totalCount, { statements: 'once' }) : totalCount }
            : {}),
          ...(target.query.enableTotalCount && target.query.countStrategy !== 'exact'
            ? { totalCountIsEstimate: totalCountIsEstimate }
            : {}),
          ...beside?.()
        })
      })
  )
}

const totalCountIsEstimate = {
  type: new GraphQLNonNull(GraphQLBoolean),
  description:
    "Whether totalCount is the database planner's estimate (the resource's countStrategy), not a count."
}

/** The page of a cursor connection (`TodoItemConnection`, `TodoItemSubTasksConnection`): edges with cursors. */
export function cursorPage(types: GraphqlTypes, target: ResolvedResource, node: () => GraphQLObjectType) {
  return {
    pageInfo: { type: new GraphQLNonNull(pageInfoType(types)) },
    edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edgeType(types, target, node)))) }
  }
}

/** A service page as a connection; the page's records sit at `window.offset` onwards. */
export function toConnection(page: Page<ResourceRecord>, window: PageWindow): Connection {
  const edges = page.data.map((node, index) => ({ node, cursor: encodeCursor(window.offset + index) }))
  return {
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: window.offset > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null
    },
    edges,
    totalCount: page.total,
    totalCountIsEstimate: page.totalIsEstimate === true
  }
}

/**
 * A keyset page as a connection: each record's cursor holds its values of `page.keysetFields`. A page
 * started after a cursor has records before it, one ended before a cursor has records after it.
 */
export function toKeysetConnection(page: Page<ResourceRecord>, scope: string): Connection {
  const fields = page.keysetFields ?? []
  const edges = page.data.map((node) => ({ node, cursor: encodeKeysetCursor(scope, fields, node) }))
  return {
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage ?? false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null
    },
    edges,
    totalCount: page.total,
    totalCountIsEstimate: page.totalIsEstimate === true
  }
}
