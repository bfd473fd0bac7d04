import { BadRequest } from '@feathersjs/errors'
import type { GraphQLField, GraphQLFieldConfig, GraphQLFieldConfigMap } from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import type { GraphqlContext } from './context'
import type { GraphqlSchemaPart } from './schema-part'
import { querySchemaPart } from './query'
import { aggregateSchemaPart } from './aggregate'

const LIVE = 'feathersQueryLive'

/** A live field's own facts: the resource its question reads. */
export interface LiveField {
  resource: ResolvedResource
  /** The service method the query calls: a `find` reads within the caller's read scope. */
  method: 'find' | 'aggregate'
}

/**
 * The same field as a subscription: its result is computed as the query's and pushed again whenever a write
 * changes it. It is served whole by the WebSocket endpoint (see `liveOperation`), never field by field.
 */
function liveField(
  live: LiveField,
  query: GraphQLFieldConfig<unknown, GraphqlContext>
): GraphQLFieldConfig<unknown, GraphqlContext> {
  return {
    ...query,
    description: `${query.description ?? ''}${query.description ? ' ' : ''}Live: the result, then the new result whenever a write changes it.`,
    extensions: { ...query.extensions, [LIVE]: live },
    subscribe() {
      throw new BadRequest('Live queries are served over WebSocket (graphql-ws) at this path')
    },
    resolve: (payload) => payload
  }
}

/** The live form of a subscription field, if it is one. */
export function liveFieldOf(field: GraphQLField<unknown, unknown> | undefined): LiveField | undefined {
  return field?.extensions[LIVE] as LiveField | undefined
}

/**
 * Live queries: every root query of a resource (`todoItem`, `todoItems`, `todoItemAggregate`,
 * `todoItemAggregateGroups`) is also a subscription of the same name, arguments and type, as Hasura names them.
 */
export const liveSchemaPart: GraphqlSchemaPart = {
  name: 'live queries',
  subscriptionFields(resource, types) {
    const fields: GraphQLFieldConfigMap<unknown, GraphqlContext> = {}
    const parts = [
      [querySchemaPart, 'find'],
      [aggregateSchemaPart, 'aggregate']
    ] as const
    for (const [part, method] of parts) {
      for (const [name, query] of Object.entries(part.queryFields?.(resource, types) ?? {})) {
        fields[name] = liveField({ resource, method }, query)
      }
    }
    return fields
  }
}
