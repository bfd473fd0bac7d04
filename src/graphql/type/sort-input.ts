import { GraphQLEnumType, GraphQLInputObjectType, GraphQLNonNull, GraphQLString } from 'graphql'
import { badField } from '../../common/errors'
import { filterableFields, type ResolvedResource } from '../../resource/resolved'
import type { SortAggregate, SortField } from '../../model/query'
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

/** `enum SortAggregate`: what a parent can be sorted by of a to-many relation's records. */
function sortAggregateType(types: GraphqlTypes) {
  const names: Record<SortAggregate, string> = {
    count: 'COUNT',
    countDistinct: 'COUNT_DISTINCT',
    sum: 'SUM',
    avg: 'AVG',
    min: 'MIN',
    max: 'MAX'
  }
  return types.named(
    'SortAggregate',
    () =>
      new GraphQLEnumType({
        name: 'SortAggregate',
        description: 'An aggregate of the records of a to-many relation, computed per record to sort by.',
        values: Object.fromEntries(Object.entries(names).map(([value, name]) => [name, { value }]))
      })
  )
}

/** The `path` member of sort entries: a related record's field, by its dotted to-one relations. */
export const SORT_PATH = {
  type: GraphQLString,
  description:
    "Instead of field: a related record's field through to-one relations, dotted (e.g. owner.name), NULL where there is none the caller may read; with aggregate, a to-many relation's field (subTasks.points) or the relation alone for COUNT."
}

/**
 * `<Resource>Sort {field, direction, nulls, path, aggregate}`: one entry of the `sorting` list, by one of the
 * resource's fields, or by `path` a related record's field or an aggregate of a relation's records.
 */
export function sortInputType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}Sort`
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        fields: {
          field: {
            type: sortFieldsType(types, resource),
            description: 'A field of the record (or give path).'
          },
          direction: { type: new GraphQLNonNull(sortDirectionType(types)) },
          nulls: { type: sortNullsType(types) },
          path: SORT_PATH,
          aggregate: {
            type: sortAggregateType(types),
            description:
              "With path: sort by this aggregate of the relation's records (COUNT is 0 without any)."
          }
        }
      })
  )
}

/** An entry's key: its `field` or its `path`, exactly one of them (a 400 naming the entry otherwise). */
export function sortKeyOf(entry: { field?: string | null; path?: string | null }, index: number) {
  const { field, path } = entry
  const given = [field, path].filter((value) => value !== undefined && value !== null)
  if (given.length !== 1) throw badField(`sorting.${index}.field`, 'give either field or path')
  return given[0] as string
}

/** The `sorting` argument as the query model; an empty list lets the service apply `defaultSort`. */
export function toSorting(value: unknown): SortField[] {
  if (!Array.isArray(value)) return []
  return value.map((entry: SortField & { path?: string | null }, index) => ({
    field: sortKeyOf(entry, index),
    direction: entry.direction,
    ...(entry.nulls ? { nulls: entry.nulls } : {}),
    ...(entry.aggregate ? { aggregate: entry.aggregate } : {})
  }))
}
