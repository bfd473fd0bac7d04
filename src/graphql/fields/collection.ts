import { BadRequest } from '@feathersjs/errors'
import { GraphQLList, GraphQLNonNull, type GraphQLObjectType, type GraphQLOutputType } from 'graphql'
import type { ResolvedPaging, ResolvedResource } from '../../resource/resolved'
import type { Page } from '../../model/page'
import type { ResourceRecord } from '../../model/records'
import type { PageRequest } from './collection-args'
import { cursorPage, pagedType, toConnection, toKeysetConnection } from '../type/connection'
import { offsetPage, toOffsetConnection } from '../type/offset-connection'
import type { GraphqlTypes } from '../type/registry'
import { connectionAggregateField, type ConnectionOwner } from './connection-aggregate'

/**
 * A collection of `target` records in GraphQL, by its paging strategy: a cursor connection (offset or
 * keyset cursors), an offset connection, or a plain list.
 */
export interface CollectionShape {
  paging: ResolvedPaging
  /** The connection type's name for CURSOR and OFFSET. */
  name: string
  target: ResolvedResource
  node: () => GraphQLObjectType
  /** `totalCount` is counted by a statement of its own (root collections). */
  countedApart?: boolean
  /** The connection's `aggregate` beside its page, when the target's aggregates are on there. */
  aggregate?: ConnectionOwner
}

export function collectionType(types: GraphqlTypes, shape: CollectionShape): GraphQLOutputType {
  const { paging, name, target, node, countedApart, aggregate } = shape
  if (paging.strategy === 'none') return new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(node())))
  // nestjs-query's names: `<Resource>OffsetConnection` at the root, `<Parent><Relation>Connection` for both.
  const page = () =>
    paging.strategy === 'offset' ? offsetPage(types, node) : cursorPage(types, target, node)
  const beside = aggregate && (() => ({ aggregate: connectionAggregateField(types, aggregate) }))
  return new GraphQLNonNull(pagedType(types, name, target, page, countedApart === true, beside))
}

/**
 * What the collection field resolves to for a page read as `request` asked. A NONE list that would hold more
 * than `maxResultsSize` records is an error, not a list cut short without a word: the client narrows its
 * filter (the page was read with `limit: maxResultsSize`, and one row more tells).
 */
export function collectionResult(target: ResolvedResource, page: Page<ResourceRecord>, request: PageRequest) {
  switch (request.strategy) {
    case 'none':
      if (page.hasNextPage) {
        const max = target.query.maxResultsSize
        throw new BadRequest(
          `More than ${max} ${target.name} records match; narrow the filter ` +
            `(an unpaged list holds at most ${max})`,
          { errors: [{ field: 'filter', message: `matches more than ${max} records` }] }
        )
      }
      return page.data
    case 'offset':
      return toOffsetConnection(page, request.window)
    case 'cursor':
      if (request.cursorScope) return toKeysetConnection(page, request.cursorScope)
      return toConnection(page, request.window)
  }
}
