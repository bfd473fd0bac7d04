import {
  GraphQLInputObjectType,
  GraphQLNonNull,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLNullableType
} from 'graphql'
import { badField } from '../../common/errors'
import type { Filter } from '../../model/query'
import type { ResolvedResource } from '../../resource/resolved'
import { filterInputType, toFilter } from './filter-input'
import type { GraphqlTypes } from './registry'

export const nonNull = <T extends GraphQLNullableType>(type: T) => new GraphQLNonNull(type)

/** Whether a filter holds a condition: a comparison with an operator, directly or inside `and`/`or`. */
function holdsCondition(filter: Filter | undefined): boolean {
  if (!filter) return false
  return Object.entries(filter).some(([key, value]) => {
    if (value === undefined || value === null) return false
    if (key === 'and' || key === 'or') return (value as Filter[]).some(holdsCondition)
    return Object.keys(value as object).length > 0
  })
}

/**
 * The filter of `updateMany`/`deleteMany`: one without any condition is refused, as nestjs-query refuses an
 * empty one, so that no client changes every record by leaving the filter out.
 */
export function requiredFilter(resource: ResolvedResource, value: unknown, path = 'input.filter'): Filter {
  const filter = toFilter(resource, value, path)
  if (!holdsCondition(filter)) {
    throw badField(path, 'must hold at least one condition: an empty filter would reach every record')
  }
  return filter!
}

/** `<name>` with one field holding a value of `type`, e.g. `DeleteOneTodoItemInput { id: ID! }`. */
export function inputObject(
  types: GraphqlTypes,
  name: string,
  fields: Record<string, [GraphQLInputType, string]>
) {
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        fields: Object.fromEntries(
          Object.entries(fields).map(([field, [type, description]]) => [field, { type, description }])
        ) as GraphQLInputFieldConfigMap
      })
  )
}

/** `<Resource>UpdateFilter`, `<Resource>DeleteFilter`, `<Resource>SubscriptionFilter`: nestjs-query's names. */
export function namedFilter(
  types: GraphqlTypes,
  resource: ResolvedResource,
  use: 'Update' | 'Delete' | 'Subscription'
) {
  const name = `${resource.name}${use}Filter`
  return new GraphQLNonNull(filterInputType(types, resource, { name, relations: false }))
}
