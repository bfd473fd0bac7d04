import { selectedRecordFields } from './selection'
import { BadRequest } from '@feathersjs/errors'
import { GraphQLNonNull, type GraphQLFieldConfigMap, type GraphQLInputType } from 'graphql'
import { upperFirst } from '../../resource/naming'
import type { ResolvedResource } from '../../resource/resolved'
import type { GraphqlContext, SubscriptionKind } from './context'
import { toFilter } from '../type/filter-input'
import { withWork } from '../type/field-work'
import { RelationLoaders } from './loaders'
import { objectType } from '../type/object-type'
import type { GraphqlTypes } from '../type/registry'
import type { GraphqlSchemaPart } from './schema-part'
import { inputObject, namedFilter } from '../type/inputs'
import { allowsMulti } from '../../service/multi'
import {
  deleteManyResponseType,
  deleteResponseType,
  updateManyResponseType
} from '../type/mutation-responses'

type Fields = GraphQLFieldConfigMap<unknown, GraphqlContext>

/**
 * One subscription field. Subscribing runs a `find` of no records with the subscriber's filter through the
 * service, so the read guards and `authorize` decide whether the connection may subscribe at all and the
 * filter is checked as a query's is (BAD_USER_INPUT naming what is wrong) before anything is delivered.
 */
function subscriptionField(
  resource: ResolvedResource,
  kind: SubscriptionKind,
  type: Fields[string]['type'],
  input?: GraphQLInputType
): Fields[string] {
  return withWork(
    {
      type,
      args: input ? { input: { type: input } } : {},
      async subscribe(_source, args, context, info) {
        if (!context.events)
          throw new BadRequest('Subscriptions are served over WebSocket (graphql-ws) at this path')
        const filter = toFilter(
          resource,
          (args.input as { filter?: unknown } | undefined)?.filter,
          'input.filter'
        )
        // Its selection too, so that a field the subscriber may not read is refused now, not left out later.
        const select =
          kind === 'updatedMany' || kind === 'deletedMany' ? [] : selectedRecordFields(info, resource, [])
        await context.service(resource).find(context.params({ filter, select, paging: { limit: 0 } }))
        return context.events.listen(resource, kind, filter)
      },
      resolve(payload, _args, context) {
        // Relations of each event's record are read anew, not from the previous event's loaders.
        context.loaders = new RelationLoaders(context)
        return payload
      }
    },
    { statements: 'once' }
  )
}

/**
 * nestjs-query's subscriptions of a resource: `created<R>`, `updatedOne<R>`, `updatedMany<Rs>`,
 * `deletedOne<R>` and `deletedMany<Rs>`, the one-record ones with an optional `input: { filter }`. They exist
 * where the matching mutations do, and report writes from every transport (see `ResourceEvents`).
 */
function resourceSubscriptionFields(types: GraphqlTypes, resource: ResolvedResource): Fields {
  const { definition, name } = resource
  const Plural = upperFirst(resource.plural)
  const node = () => new GraphQLNonNull(objectType(types, resource))
  const filterInput = (operation: string) =>
    inputObject(types, `${operation}SubscriptionFilterInput`, {
      filter: [namedFilter(types, resource, 'Subscription'), 'Specify to filter the records returned.']
    })
  const fields: Fields = {}
  if (!definition.create?.disabled) {
    fields[`created${name}`] = subscriptionField(resource, 'created', node(), filterInput(`Create${name}`))
  }
  if (!definition.update?.disabled) {
    fields[`updatedOne${name}`] = subscriptionField(
      resource,
      'updatedOne',
      node(),
      filterInput(`UpdateOne${name}`)
    )
    if (allowsMulti(resource, 'patch')) {
      fields[`updatedMany${Plural}`] = subscriptionField(
        resource,
        'updatedMany',
        new GraphQLNonNull(updateManyResponseType(types))
      )
    }
  }
  if (!definition.delete?.disabled) {
    fields[`deletedOne${name}`] = subscriptionField(
      resource,
      'deletedOne',
      new GraphQLNonNull(deleteResponseType(types, resource)),
      filterInput(`DeleteOne${name}`)
    )
    if (allowsMulti(resource, 'remove')) {
      fields[`deletedMany${Plural}`] = subscriptionField(
        resource,
        'deletedMany',
        new GraphQLNonNull(deleteManyResponseType(types))
      )
    }
  }
  return fields
}

export const subscriptionSchemaPart: GraphqlSchemaPart = {
  name: 'subscriptions',
  subscriptionFields: (resource, types) => resourceSubscriptionFields(types, resource)
}
