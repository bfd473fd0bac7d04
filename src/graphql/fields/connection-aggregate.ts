import type { GraphQLFieldConfig } from 'graphql'
import { upperFirst } from '../../resource/naming'
import type { ResolvedManyRelation, ResolvedResource } from '../../resource/resolved'
import type { AggregatePage, AggregateResponse } from '../../model/aggregate'
import type { Filter } from '../../model/query'
import { copyWith } from '../../common/copy-with'
import { withWork } from '../type/field-work'
import { aggregateArgs, argsRequest, responseListType } from './aggregate'
import { aggregateRequestOf } from './aggregate-request'
import type { GraphqlTypes } from '../type/registry'
import type { GraphqlContext } from './context'
import { aggregateBatchSize } from './loaders'

/**
 * What the `aggregate` beside a connection's page aggregates: the records the connection's filter matches, at
 * the root or, for a relation connection, those of one parent. The page's window and cursors are left out.
 */
export interface AggregateScope {
  filter: Filter | undefined
  parent?: { relation: ResolvedManyRelation; id: unknown }
}

/** The scope of each connection a collection field answered; the connection object is the key. */
const scopes = new WeakMap<object, AggregateScope>()

/** The connection `result` with the scope its `aggregate` reads (a NONE list has no `aggregate`). */
export function withAggregateScope<T>(result: T, scope: AggregateScope): T {
  if (typeof result === 'object' && result !== null && !Array.isArray(result)) scopes.set(result, scope)
  return result
}

/** Where the connection field lives: a root collection of `target`, or `relation` of `parent`. */
export type ConnectionOwner =
  | { target: ResolvedResource }
  | { target: ResolvedResource; parent: ResolvedResource; relation: ResolvedManyRelation }

const description = (target: ResolvedResource) =>
  `Aggregates of all ${target.name} records this connection's filter matches (with its authorization), not ` +
  'only the page: groupBy, count, sum and the other functions, as the aggregate query answers them. ' +
  'Computed only when selected.'

/**
 * `aggregate(having, sorting, paging)` on a connection: the aggregate query's response list and arguments but
 * `filter`, which is the connection's. At the root one statement each time it is selected, as
 * `<singular>Aggregate`; on a relation connection all parents in one partitioned statement, as
 * `<relation>Aggregate` (same loader, same response type).
 */
export function connectionAggregateField(
  types: GraphqlTypes,
  owner: ConnectionOwner
): GraphQLFieldConfig<unknown, GraphqlContext> {
  const { target } = owner
  const { filter: _filter, ...args } = aggregateArgs(types, target)
  if (!('relation' in owner)) {
    return withWork(
      {
        type: responseListType(types, target, { prefix: target.name, fill: true }),
        args,
        description: description(target),
        async resolve(connection, args, context, info): Promise<AggregateResponse[]> {
          const request = copyWith(aggregateRequestOf(info), argsRequest(args))
          const { filter } = scopeOf(connection)
          const result = await context.service(target).aggregate(request, context.params({ filter }))
          return Array.isArray(result) ? result : (result as AggregatePage).data
        }
      },
      { statements: 'once', maxGroups: target.maxAggregateGroups, besideRecords: true }
    )
  }
  const { parent, relation } = owner
  return withWork(
    {
      type: responseListType(types, target, {
        prefix: `${parent.name}${upperFirst(relation.name)}`,
        fill: false
      }),
      args,
      description: description(target),
      resolve(connection, args, context, info) {
        const request = copyWith(aggregateRequestOf(info), argsRequest(args))
        const scope = scopeOf(connection)
        return context.loaders.aggregate(relation, request, scope.filter).load(scope.parent!.id)
      }
    },
    {
      statements: 'batched',
      batchSize: aggregateBatchSize(target),
      maxGroups: target.maxAggregateGroups,
      besideRecords: true
    }
  )
}

function scopeOf(connection: unknown) {
  const scope = scopes.get(connection as object)
  if (!scope) throw new Error('A connection was answered without the scope of its aggregate')
  return scope
}
