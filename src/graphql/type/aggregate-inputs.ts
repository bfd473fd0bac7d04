import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLString,
  type GraphQLInputFieldConfigMap
} from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import { AGGREGATE_FUNCTIONS, type AggregateFunction } from '../../model/aggregate'
import { groupable } from '../../aggregate/request-checker'
import { aggregateProblem } from '../../resource/aggregatable'
import { valueField } from '../../aggregate/having'
import { comparisonType } from './comparisons'
import { sortDirectionType, sortNullsType } from './sort-input'
import { dateTimeScalar } from './scalars'
import type { GraphqlTypes } from './registry'

/** GraphQL's names of the aggregate functions, as nestjs-query names enum values. */
const FUNCTION_NAMES: Record<AggregateFunction, string> = {
  count: 'COUNT',
  countDistinct: 'COUNT_DISTINCT',
  sum: 'SUM',
  avg: 'AVG',
  min: 'MIN',
  max: 'MAX',
  stddevPop: 'STDDEV_POP',
  stddevSamp: 'STDDEV_SAMP',
  varPop: 'VAR_POP',
  varSamp: 'VAR_SAMP',
  median: 'MEDIAN'
}

const upperFirst = (text: string) => text[0].toUpperCase() + text.slice(1)

/** `enum AggregateFunction {COUNT COUNT_DISTINCT SUM AVG MIN MAX}`: what an aggregate sort entry orders by. */
function aggregateFunctionType(types: GraphqlTypes) {
  return types.named(
    'AggregateFunction',
    () =>
      new GraphQLEnumType({
        name: 'AggregateFunction',
        values: Object.fromEntries(AGGREGATE_FUNCTIONS.map((fn) => [FUNCTION_NAMES[fn], { value: fn }]))
      })
  )
}

/**
 * `<Resource>AggregateHaving {and or count countDistinct sum avg min max}`: conditions on each group's
 * aggregates, e.g. `{count: {id: {gt: 5}}}`, with each aggregate's comparison type (Int for counts, Number
 * for sums and averages, the field's own for min and max).
 */
export function havingInputType(types: GraphqlTypes, resource: ResolvedResource): GraphQLInputObjectType {
  const name = `${resource.name}AggregateHaving`
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        description: 'Which groups to answer: conditions on their aggregates (SQL HAVING).',
        fields: () => {
          const fields: GraphQLInputFieldConfigMap = {
            and: { type: new GraphQLList(new GraphQLNonNull(havingInputType(types, resource))) },
            or: { type: new GraphQLList(new GraphQLNonNull(havingInputType(types, resource))) }
          }
          for (const fn of AGGREGATE_FUNCTIONS) {
            const applicable = resource.fields.filter((field) => !aggregateProblem(fn, field))
            if (!applicable.length) continue
            const memberName = `${resource.name}${upperFirst(fn)}AggregateHaving`
            const member = types.named(
              memberName,
              () =>
                new GraphQLInputObjectType({
                  name: memberName,
                  fields: Object.fromEntries(
                    applicable.map((field) => {
                      const value = valueField({ fn, field, alias: field.name })
                      return [field.name, { type: comparisonType(types, value) }]
                    })
                  )
                })
            )
            fields[fn] = { type: member }
          }
          return fields
        }
      })
  )
}

/** `<Resource>AggregateSortFields`: the fields groups can be ordered by (as group keys or aggregates). */
function aggregateSortFieldsType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}AggregateSortFields`
  const fields = resource.fields.filter(
    (field) => groupable(field) || AGGREGATE_FUNCTIONS.some((fn) => !aggregateProblem(fn, field))
  )
  return types.named(
    name,
    () =>
      new GraphQLEnumType({
        name,
        values: Object.fromEntries(fields.map((field) => [field.name, { value: field.name }]))
      })
  )
}

/**
 * `<Resource>AggregateSort {field aggregate direction nulls path}`: without `aggregate`, by the group key of
 * `field` (which must be grouped by), or of `path` for a related record's; with it, by that aggregate of
 * `field`.
 */
export function aggregateSortType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}AggregateSort`
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        fields: {
          field: { type: aggregateSortFieldsType(types, resource), description: 'A field (or give path).' },
          aggregate: {
            type: aggregateFunctionType(types),
            description: 'Order by this aggregate of the field; without it, by the field as a group key.'
          },
          direction: { type: new GraphQLNonNull(sortDirectionType(types)) },
          nulls: { type: sortNullsType(types) },
          path: {
            type: GraphQLString,
            description:
              "Instead of field: a related record's group key by its dotted to-one relations, e.g. todoItem.completed."
          }
        }
      })
  )
}

/** `AggregatePaging {limit offset}`: one page of the groups, in their order. */
export function aggregatePagingType(types: GraphqlTypes) {
  return types.named(
    'AggregatePaging',
    () =>
      new GraphQLInputObjectType({
        name: 'AggregatePaging',
        description:
          "A page of groups: at most `limit` (up to the resource's maxGroups) after `offset` groups.",
        fields: { limit: { type: GraphQLInt }, offset: { type: GraphQLInt } }
      })
  )
}

/** `GroupFill {from to}`: every bucket of a date group between two instants, zero counts where none fell. */
export function groupFillType(types: GraphqlTypes) {
  return types.named(
    'GroupFill',
    () =>
      new GraphQLInputObjectType({
        name: 'GroupFill',
        description:
          'Answer every bucket from the one holding `from` to the one holding `to` (by default the bounds of the filter on the field), counting 0 where no record falls.',
        fields: {
          from: { type: types.named('DateTime', dateTimeScalar) },
          to: { type: types.named('DateTime', dateTimeScalar) }
        }
      })
  )
}

export const TIME_ZONE_ARG = {
  type: GraphQLString,
  defaultValue: 'UTC',
  description: 'The IANA time zone whose calendar the buckets follow, e.g. Europe/Berlin.'
}
