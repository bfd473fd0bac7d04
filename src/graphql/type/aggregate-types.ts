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
  AGGREGATE_FUNCTIONS,
  DATE_BUCKETS,
  RUNNING_FUNCTIONS,
  type AggregateFunction,
  type AggregateResponse,
  type StatisticalFunction
} from '../../model/aggregate'
import { groupable } from '../../aggregate/request-checker'
import { aggregateProblem } from '../../resource/aggregatable'
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
  return resource.fields.filter((field) => !aggregateProblem(fn, field))
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

/** A date group key's arguments: its bucket and time zone, and on root aggregates its fill. */
function dateGroupArgs(types: GraphqlTypes, fill: boolean) {
  return {
    by: {
      type: groupByBucketType(types),
      defaultValue: 'DAY',
      description:
        'Group by the start of the hour, day, week, month, quarter or year, answered as an instant.'
    },
    timeZone: TIME_ZONE_ARG,
    ...(fill ? { fill: { type: groupFillType(types) } } : {})
  }
}

/** The to-one relations whose records' fields can be group keys (see `relationPath`). */
const groupableRelations = (resource: ResolvedResource) =>
  resource.one.filter(
    (relation) => relation.filterable && relation.target.fields.some((field) => relatedGroupable(field))
  )

const relatedGroupable = (field: ResolvedField) => groupable(field) && !field.hidden

/**
 * The group keys of `resource`'s own fields (`fill` on its dates when `fill`), and of its to-one relations'
 * records: `todoItem { completed }` groups by the related record's field, as far as `maxRelationDepth`.
 */
function groupKeyFields(
  types: GraphqlTypes,
  resource: ResolvedResource,
  fields: ResolvedField[],
  fill: boolean
): GraphQLFieldConfigMap<unknown, unknown> {
  const members: GraphQLFieldConfigMap<unknown, unknown> = {}
  for (const field of fields) {
    members[field.name] = { type: fieldScalar(types, field), description: field.description }
    // Unlike nestjs-query's, relation aggregates take buckets and time zones too.
    if (field.kind === 'date') members[field.name].args = dateGroupArgs(types, fill)
  }
  for (const relation of groupableRelations(resource)) {
    if (members[relation.name]) continue
    members[relation.name] = {
      type: relatedGroupByType(types, relation.target),
      description: `Group by fields of the related ${relation.target.name} (null where there is none the caller may read).`
    }
  }
  return members
}

/**
 * `<Resource>RelatedGroupBy`: the group keys of a related record, reached through a to-one relation. One type
 * for root and relation aggregates, so its dates take `fill`, which relation aggregates refuse with a 400.
 */
function relatedGroupByType(types: GraphqlTypes, resource: ResolvedResource): GraphQLObjectType {
  const name = `${resource.name}RelatedGroupBy`
  return types.named(
    name,
    () =>
      new GraphQLObjectType({
        name,
        fields: () => groupKeyFields(types, resource, resource.fields.filter(relatedGroupable), true)
      })
  )
}

function groupByType(types: GraphqlTypes, resource: ResolvedResource, options: AggregateResponseOptions) {
  const name = `${options.prefix}AggregateGroupBy`
  return types.named(
    name,
    () =>
      new GraphQLObjectType({
        name,
        fields: () => groupKeyFields(types, resource, resource.fields.filter(groupable), options.fill)
      })
  )
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
    if (resource.fields.some((field) => field.kind === 'date' && groupable(field))) {
      Object.assign(members, seriesMembers(types, prefix, members))
    }
    return new GraphQLObjectType({ name, fields: members })
  })
}

/**
 * `running`, `previous` and `periodAgo(period)` over a date bucket: the cumulative values of count, sum, min
 * and max, and every aggregate of the calendar-preceding bucket and of the same bucket a period earlier,
 * with the member types of the bucket's own aggregates.
 */
function seriesMembers(
  types: GraphqlTypes,
  prefix: string,
  members: GraphQLFieldConfigMap<unknown, unknown>
): GraphQLFieldConfigMap<unknown, unknown> {
  // The functions of a request's lists: not percentile, whose p is an argument the compared buckets lack.
  const membersOf = (functions: readonly AggregateFunction[]) =>
    Object.fromEntries(functions.filter((fn) => members[fn]).map((fn) => [fn, members[fn]]))
  const values = membersOf(AGGREGATE_FUNCTIONS)
  const running = membersOf(RUNNING_FUNCTIONS)
  const period = new GraphQLObjectType({ name: `${prefix}AggregatePeriod`, fields: values })
  return {
    running: {
      type: new GraphQLObjectType({ name: `${prefix}AggregateRunning`, fields: running }),
      description:
        'Over a date bucket: the cumulative values from the first bucket through this one, restarting for each value of the other group keys (null for the records without a date, which count in no bucket).'
    },
    previous: {
      type: period,
      description:
        'Over a date bucket: the aggregates of the calendar-preceding bucket (0 / null when it has no records; null outside the range, whose records were not read). Needs a range: a filter on the date with gte and lte, or fill.'
    },
    periodAgo: {
      type: period,
      args: {
        period: {
          type: new GraphQLNonNull(groupByBucketType(types)),
          description: 'How far back: a period longer than the bucket (for weeks, YEAR: 52 weeks).'
        }
      },
      description:
        "Over a date bucket: the aggregates of the same bucket one period earlier, in the time zone's calendar (an HOUR a DAY earlier is the same hour on the clock)."
    }
  }
}
