import { GraphQLEnumType, GraphQLInputObjectType, GraphQLNonNull } from 'graphql'
import { filterableFields, type ResolvedResource } from '../../resource/resolved'
import type { SortField } from '../../model/query'
import type { GraphqlTypes } from './registry'

export function sortDirectionType(types: GraphqlTypes) {
  return types.named(
    'SortDirection',
    () =>
      new GraphQLEnumType({
        name: 'SortDirection',
        description: 'Sort direction.',
        values: { ASC: { value: 'ASC' }, DESC: { value: 'DESC' } }
      })
  )
}

export function sortNullsType(types: GraphqlTypes) {
  return types.named(
    'SortNulls',
    () =>
      new GraphQLEnumType({
        name: 'SortNulls',
        description: 'Where null values go; by default they sort as the smallest value.',
        values: { NULLS_FIRST: { value: 'NULLS_FIRST' }, NULLS_LAST: { value: 'NULLS_LAST' } }
      })
  )
}

/** `<Resource>SortFields`: the filterable fields (filterOnly ones included). */
export function sortFieldsType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}SortFields`
  return types.named(
    name,
    () =>
      new GraphQLEnumType({
        name,
        values: Object.fromEntries(
          filterableFields(resource).map((field) => [field.name, { value: field.name }])
        )
      })
  )
}

/** `<Resource>Sort {field, direction, nulls}`: one entry of the `sorting` list. */
export function sortInputType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}Sort`
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        fields: {
          field: { type: new GraphQLNonNull(sortFieldsType(types, resource)) },
          direction: { type: new GraphQLNonNull(sortDirectionType(types)) },
          nulls: { type: sortNullsType(types) }
        }
      })
  )
}

/** The `sorting` argument as the query model; an empty list lets the service apply `defaultSort`. */
export function toSorting(value: unknown): SortField[] {
  if (!Array.isArray(value)) return []
  return value.map((entry: SortField) => ({
    field: entry.field,
    direction: entry.direction,
    ...(entry.nulls ? { nulls: entry.nulls } : {})
  }))
}
