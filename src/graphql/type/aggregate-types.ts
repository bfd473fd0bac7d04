import {
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLFieldConfigMap,
  type GraphQLOutputType
} from 'graphql'
import type { ResolvedField, ResolvedResource } from '../../resource/resolved'
import {
  DATE_BUCKETS,
  type AggregateFunction,
  type AggregateResponse,
  type StatisticalFunction
} from '../../model/aggregate'
import { groupable, unsupported } from '../../aggregate/request-checker'
import { fieldScalar } from './field-types'
import type { GraphqlTypes } from './registry'
import { groupFillType, TIME_ZONE_ARG } from './aggregate-inputs'

/** `enum GroupBy {HOUR DAY WEEK MONTH QUARTER YEAR}`: the bucket a date is truncated to when grouping by it. */
export function groupByBucketType(types: GraphqlTypes) {
  return types.named(
    'GroupBy',
    () =>
      new GraphQLEnumType({
        name: 'GroupBy',
        description:
          'Bucket of a date group: the hour, day, ISO week (from Monday), month, quarter or year, in the calendar of the time zone given with it (UTC by default).',
        values: Object.fromEntries(DATE_BUCKETS.map((bucket) => [bucket, { value: bucket }]))
      })
  )
}

const STATISTICS_DESCRIPTIONS: Record<StatisticalFunction, string> = {
  stddevPop: 'Population standard deviation of the values (null for none).',
  stddevSamp: 'Sample standard deviation of the values (null for fewer than two).',
  varPop: 'Population variance of the values (null for none).',
  varSamp: 'Sample variance of the values (null for fewer than two).',
  median: 'Median of the values, the two middle ones interpolated (null for none).'
}

/** The fields `fn` applies to, as the service's aggregate check decides (filterOnly ones only counted). */
function fieldsFor(resource: ResolvedResource, fn: AggregateFunction) {
  return resource.fields.filter((field) => !unsupported(fn, field))
}

/** An object type of nullable fields, one per field, each of the type `typeOf` gives. */
function membersType(
  name: string,
  fields: ResolvedField[],
  typeOf: (field: ResolvedField) => GraphQLOutputType
) {
  return new GraphQLObjectType({
    name,
    fields: Object.fromEntries(
      fields.map((field) => [field.name, { type: typeOf(field), description: field.description }])
    )
  })
}

export interface AggregateResponseOptions {
  /** Type name prefix: the resource name, or parent + relation name (`TodoItemSubTasks`). */
  prefix: string
  /** Date group keys take `fill` (root aggregates; a relation's groups are per parent). */
  fill: boolean
}

function groupByType(types: GraphqlTypes, resource: ResolvedResource, options: AggregateResponseOptions) {
  const name = `${options.prefix}AggregateGroupBy`
  return types.named(name, () => {
    const fields: GraphQLFieldConfigMap<unknown, unknown> = {}
    for (const field of resource.fields.filter(groupable)) {
      fields[field.name] = { type: fieldScalar(types, field), description: field.description }
      // Unlike nestjs-query's, relation aggregates take buckets and time zones too.
      if (field.kind === 'date') {
        fields[field.name].args = {
          by: {
            type: groupByBucketType(types),
            defaultValue: 'DAY',
            description:
              'Group by the start of the hour, day, week, month, quarter or year, answered as an instant.'
          },
          timeZone: TIME_ZONE_ARG,
          ...(options.fill ? { fill: { type: groupFillType(types) } } : {})
        }
      }
    }
    return new GraphQLObjectType({ name, fields })
  })
}

/**
 * `<Prefix>AggregateResponse {groupBy count countDistinct sum avg min max}`, all nullable and selected by
 * the client: count of every filterable field (non-null values, Int), countDistinct of those that are read, sum, avg, the deviations, variances and median of the numeric ones (Float; left out
 * when there are none), min and max of all but booleans (the field's own type), groupBy keys with their own
 * type; filterOnly fields only in count, as they give no value away. The shapes and names of nestjs-query.
 */
export function aggregateResponseType(
  types: GraphqlTypes,
  resource: ResolvedResource,
  options: AggregateResponseOptions
): GraphQLObjectType {
  const { prefix } = options
  const name = `${prefix}AggregateResponse`
  return types.named(name, () => {
    const numeric = fieldsFor(resource, 'sum')
    const ordered = fieldsFor(resource, 'min')
    const own = (field: ResolvedField) => fieldScalar(types, field)
    const members: GraphQLFieldConfigMap<unknown, unknown> = {
      groupBy: {
        type: groupByType(types, resource, options),
        description: 'The group of this entry: selecting fields here groups by them.'
      },
      count: {
        type: membersType(`${prefix}CountAggregate`, fieldsFor(resource, 'count'), () => GraphQLInt),
        description: 'Number of non-null values.'
      },
      countDistinct: {
        type: membersType(
          `${prefix}CountDistinctAggregate`,
          fieldsFor(resource, 'countDistinct'),
          () => GraphQLInt
        ),
        description: 'Number of distinct non-null values.'
      }
    }
    if (numeric.length) {
      members.sum = { type: membersType(`${prefix}SumAggregate`, numeric, () => GraphQLFloat) }
      members.avg = { type: membersType(`${prefix}AvgAggregate`, numeric, () => GraphQLFloat) }
    }
    if (ordered.length) {
      members.min = { type: membersType(`${prefix}MinAggregate`, ordered, own) }
      members.max = { type: membersType(`${prefix}MaxAggregate`, ordered, own) }
    }
    // After nestjs-query's members, which keep their order.
    for (const [fn, description] of numeric.length ? Object.entries(STATISTICS_DESCRIPTIONS) : []) {
      const typeName = `${prefix}${fn[0].toUpperCase()}${fn.slice(1)}Aggregate`
      members[fn] = { type: membersType(typeName, numeric, () => GraphQLFloat), description }
    }
    if (numeric.length) {
      members.percentile = {
        type: membersType(`${prefix}PercentileAggregate`, numeric, () => GraphQLFloat),
        args: {
          p: { type: new GraphQLNonNull(GraphQLFloat), description: 'Which percentile, from 0 to 1.' }
        },
        description:
          'Continuous percentile of the values, interpolated between the closest ranks (null for none); several through aliases: `p95: percentile(p: 0.95) { duration }`.',
        resolve: (response, args: { p: number }) =>
          (response as AggregateResponse).percentile?.[String(args.p)]
      }
    }
    return new GraphQLObjectType({ name, fields: members })
  })
}
