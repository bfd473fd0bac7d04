import { GraphQLID, GraphQLNonNull, type GraphQLFieldConfigMap } from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import type { Page } from '../../model/page'
import type { ResourceRecord } from '../../model/records'
import { collectionArgs, pageRequest } from './collection-args'
import { collectionResult, collectionType } from './collection'
import { selectedRecordFields } from './selection'
import { withAggregateScope } from './connection-aggregate'
import type { GraphqlContext } from './context'
import { objectType } from '../type/object-type'
import { collectionWork, withWork } from '../type/field-work'
import type { GraphqlTypes } from '../type/registry'
import type { GraphqlSchemaPart } from './schema-part'

/**
 * The root queries of a resource: `todoItem(id)` through the service's `get` and `todoItems(paging, filter,
 * sorting)` through its `find`, so every hook of the service applies.
 */
function resourceQueryFields(
  types: GraphqlTypes,
  resource: ResolvedResource
): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  const node = () => objectType(types, resource)
  const { graphqlPaging: paging } = resource
  // nestjs-query's names: `TodoItemConnection` for cursors, `TodoItemOffsetConnection` for offsets.
  const name = `${resource.name}${paging.strategy === 'offset' ? 'OffsetConnection' : 'Connection'}`
  const aggregate = resource.aggregateEnabled ? { target: resource } : undefined
  const shape = { paging, name, target: resource, node, aggregate }
  return {
    [resource.singular]: withWork(
      {
        // Nullable: a missing or hidden record answers null with a NOT_FOUND error, not a failed query.
        type: node(),
        args: { id: { type: new GraphQLNonNull(GraphQLID), description: 'Id of the record.' } },
        resolve: (_source, args, context, info) =>
          context
            .service(resource)
            .get(args.id as string, context.params({ select: selectedRecordFields(info, resource, []) }))
      },
      { statements: 'once' }
    ),
    [resource.plural]: withWork(
      {
        type: collectionType(types, { ...shape, countedApart: true }),
        args: collectionArgs(types, resource),
        async resolve(_source, args, context, info) {
          const request = pageRequest(resource, args, info, { connection: shape.name })
          const page = (await context.service(resource).find(
            context.params({
              filter: request.filter,
              sorting: request.sorting,
              paging: request.window,
              ...(request.keyset ? { keyset: request.keyset } : {}),
              totalCount: request.totalCount,
              select: request.select
            })
          )) as Page<ResourceRecord>
          return withAggregateScope(collectionResult(resource, page, request), { filter: request.filter })
        }
      },
      collectionWork({ statements: 'once' }, resource, paging)
    )
  }
}

export const querySchemaPart: GraphqlSchemaPart = {
  name: 'queries',
  queryFields: (resource, types) => resourceQueryFields(types, resource)
}
