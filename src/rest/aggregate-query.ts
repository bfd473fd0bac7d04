import { Type, type TSchema } from '@sinclair/typebox'
import { badField, badInput, withFieldsRenamed, type FieldError } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import { compileValidator } from '../resource/validator'
import { type Filter } from '../model/query'
import {
  AGGREGATE_FUNCTIONS,
  DATE_BUCKETS,
  type AggregateFunction,
  type AggregateRequest,
  type AggregateSortField,
  type DateBucket,
  type GroupByField
} from '../model/aggregate'
import { collectionQueryParser, collectionQuerySchema } from './collection-query'
import { relationPath } from '../query/relation-path'

const list = (description: string) => Type.Optional(Type.String({ description }))

/**
 * The aggregate endpoint's own parameters. A filterable field with one of these names cannot be filtered on
 * by equality here (the parameter means the aggregate's); the list's other filter parameters all work.
 */
function aggregateParameters(resource: ResolvedResource): Record<string, TSchema> {
  return {
    groupBy: list(
      `Group keys, comma-separated; a date takes a bucket after a colon (${DATE_BUCKETS.join(', ')}; DAY by default), e.g. completed,created:MONTH; a related record's field by its to-one relations, dotted, e.g. todoItem.completed`
    ),
    timeZone: Type.Optional(
      Type.String({ description: 'IANA time zone of the date buckets (default UTC), e.g. Europe/Berlin' })
    ),
    fill: Type.Optional(
      Type.Boolean({ description: 'Answer every bucket of the date group, 0 where no record falls' })
    ),
    from: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "With fill: the first bucket holds this instant (default: the filter's bound)"
      })
    ),
    to: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "With fill: the last bucket holds this instant (default: the filter's bound)"
      })
    ),
    count: list('Fields whose non-null values to count, comma-separated'),
    countDistinct: list('Fields whose distinct non-null values to count'),
    sum: list('Numeric fields to sum'),
    avg: list('Numeric fields to average'),
    min: list('Fields whose smallest value to answer'),
    max: list('Fields whose largest value to answer'),
    stddevPop: list('Numeric fields whose population standard deviation to answer'),
    stddevSamp: list('Numeric fields whose sample standard deviation to answer'),
    varPop: list('Numeric fields whose population variance to answer'),
    varSamp: list('Numeric fields whose sample variance to answer'),
    median: list('Numeric fields whose median to answer (the two middle values interpolated)'),
    percentile: list(
      'Continuous percentiles as p:field, p from 0 to 1, comma-separated, e.g. 0.95:duration,0.5:duration'
    ),
    having: Type.Optional(
      Type.String({
        description:
          'Conditions on each group\'s aggregates as JSON, as GraphQL\'s having: {"count":{"id":{"gt":5}}}'
      })
    ),
    sort: list(
      'Order of the groups, comma-separated: a group key or function.field, - first for descending, :NULLS_FIRST or :NULLS_LAST after, e.g. -count.id,createdBy,todoItem.completed'
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: resource.maxAggregateGroups, description: 'Groups per page' })
    ),
    offset: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Groups to skip' })
    ),
    totalCount: Type.Optional(Type.Boolean({ description: 'With limit or offset: count every group' })),
    running: list(
      'Over a date bucket: cumulative values of function.field (count, sum, min, max), comma-separated, e.g. count.id,sum.priority'
    ),
    previous: list('Over a date bucket: function.field of the calendar-preceding bucket, e.g. count.id'),
    periodAgo: list('Over a date bucket: function.field of the same bucket one period earlier (give period)'),
    period: Type.Optional(
      Type.String({ description: `With periodAgo: how far back, one of ${DATE_BUCKETS.join(', ')}` })
    ),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'json (default) or csv' })
    )
  }
}

/** The query-string schema of `GET /{basePath}/aggregate`: its parameters, then the list's equality filters. */
export function aggregateQuerySchema(resource: ResolvedResource) {
  const own = aggregateParameters(resource)
  const filters = collectionQuerySchema(resource, {
    paging: false,
    filters: !resource.query.disableFilter
  }).properties
  const properties: Record<string, TSchema> = { ...own }
  for (const [name, schema] of Object.entries(filters))
    if (!(name in own) && name !== 'query') properties[name] = schema
  return Type.Object(properties, { additionalProperties: false })
}

export interface AggregateQuery {
  request: AggregateRequest
  filter?: Filter
  format: 'json' | 'csv'
}

/**
 * `0.95:duration,0.5:steps`: one entry per item, so that a 400 names the item (`percentile.1.p`); a missing
 * or malformed p is left for the planner to refuse.
 */
const percentilesOf = (value: unknown) =>
  split(value).map((item) => {
    const colon = item.lastIndexOf(':')
    const p = colon > 0 ? Number(item.slice(0, colon)) : undefined
    return { p: p as number, fields: [item.slice(colon + 1)] }
  })

const split = (value: unknown) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
    : []

function groupsOf(
  resource: ResolvedResource,
  query: Record<string, unknown>,
  errors: FieldError[]
): GroupByField[] {
  const groups = split(query.groupBy).map((entry): GroupByField => {
    const [field, by, ...rest] = entry.split(':')
    if (rest.length) {
      errors.push({
        field: 'groupBy',
        message: `"${entry}": give field or field:BUCKET (a time zone goes in timeZone)`
      })
    }
    return by ? { field, by: by.toUpperCase() as DateBucket } : { field }
  })
  // Any depth here: the plan refuses paths deeper than the limit, naming the entry.
  const kindOf = (name: string) => {
    const found = relationPath(resource, name, Infinity)
    return 'field' in found ? found.field.kind : undefined
  }
  const dates = groups.filter((group) => kindOf(group.field) === 'date')
  for (const name of ['timeZone', 'fill', 'from', 'to']) {
    if (query[name] !== undefined && !dates.length)
      errors.push({ field: name, message: 'applies to date groups; none is grouped by' })
  }
  if ((query.from !== undefined || query.to !== undefined) && query.fill !== true) {
    errors.push({ field: query.from !== undefined ? 'from' : 'to', message: 'applies with fill=true' })
  }
  for (const group of dates) {
    if (query.timeZone !== undefined) group.timeZone = query.timeZone as string
    if (query.fill === true) {
      group.fill = {
        ...(query.from === undefined ? {} : { from: query.from as string }),
        ...(query.to === undefined ? {} : { to: query.to as string })
      }
    }
  }
  return groups
}

function sortingOf(value: unknown): AggregateSortField[] {
  return split(value).map((entry) => {
    const direction = entry.startsWith('-') ? 'DESC' : 'ASC'
    const [key, nulls] = entry.replace(/^-/, '').split(':')
    const dot = key.indexOf('.')
    // function.field is an aggregate; any other dotted key a related record's group key (todoItem.completed).
    const fn = key.slice(0, dot) as AggregateFunction
    const sort: AggregateSortField =
      dot < 0 || !AGGREGATE_FUNCTIONS.includes(fn)
        ? { field: key, direction }
        : { field: key.slice(dot + 1), aggregate: fn, direction }
    if (nulls) sort.nulls = nulls.toUpperCase() as AggregateSortField['nulls']
    return sort
  })
}

/** `count.id,sum.priority` as `{count: ['id'], sum: ['priority']}` (the plan names an unknown function). */
function selectionOf(value: unknown) {
  const selection: Record<string, string[]> = {}
  for (const entry of split(value)) {
    const dot = entry.indexOf('.')
    const [fn, field] = dot < 0 ? [entry, ''] : [entry.slice(0, dot), entry.slice(dot + 1)]
    ;(selection[fn] ??= []).push(field)
  }
  return selection
}

/** `running`, `previous`, `periodAgo` with `period`: the request's series. */
function seriesOf(query: Record<string, unknown>, request: AggregateRequest) {
  if (query.running !== undefined) request.running = selectionOf(query.running)
  if (query.previous !== undefined) request.previous = selectionOf(query.previous)
  if (query.periodAgo !== undefined || query.period !== undefined) {
    if (query.periodAgo === undefined) throw badField('period', 'applies with periodAgo')
    const period = (query.period as string | undefined)?.toUpperCase() as DateBucket
    if (period === undefined) throw badField('period', 'is required with periodAgo')
    request.periodAgo = { ...selectionOf(query.periodAgo), period }
  }
}

function havingOf(value: unknown) {
  if (value === undefined) return undefined
  try {
    return JSON.parse(value as string)
  } catch {
    throw badField('having', 'must be JSON, e.g. {"count":{"id":{"gt":5}}}')
  }
}

/** Names the plan gives problems by, as this endpoint's parameters. */
const PARAMETER_OF: Array<[RegExp, string]> = [
  [/^sorting\.(\d+)(\.\w+)?$/, 'sort.$1'],
  [/^paging\.(limit|offset)$/, '$1'],
  [/^groupBy\.\d+\.(timeZone|fill)$/, '$1'],
  [/^periodAgo\.period$/, 'period']
]

/** A 400 of the service, its fields named as this endpoint's parameters. */
export function asAggregateParameters(error: unknown) {
  return withFieldsRenamed(error, (field) => {
    const match = PARAMETER_OF.find(([pattern]) => pattern.test(field))
    return match ? field.replace(match[0], match[1]) : field
  })
}

/**
 * Reads the aggregate endpoint's query string into an aggregate request and a filter: lists are
 * comma-separated, having is JSON, the other parameters filter by equality as on the list endpoint.
 */
export function aggregateQueryParser(resource: ResolvedResource) {
  const parameters = aggregateParameters(resource)
  const validate = compileValidator(Type.Object(parameters, { additionalProperties: false }), {
    coerce: true,
    what: 'Query'
  })
  const own = new Set(Object.keys(parameters))
  const filters = collectionQueryParser(resource, { paging: false, filters: !resource.query.disableFilter })
  return (raw: Record<string, unknown>): AggregateQuery => {
    const mine: Record<string, unknown> = {}
    const rest: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(raw)) (own.has(name) ? mine : rest)[name] = value
    if ('query' in rest) throw badField('query', 'search is not available on aggregates; filter by fields')
    const { filter } = filters(rest)
    const query = validate(mine, []) as Record<string, unknown>
    const errors: FieldError[] = []
    const request: AggregateRequest = {}
    const groupBy = groupsOf(resource, query, errors)
    if (errors.length) throw badInput(errors)
    if (groupBy.length) request.groupBy = groupBy
    for (const fn of AGGREGATE_FUNCTIONS) if (query[fn] !== undefined) request[fn] = split(query[fn])
    if (query.percentile !== undefined) request.percentile = percentilesOf(query.percentile)
    const having = havingOf(query.having)
    if (having !== undefined) request.having = having
    if (query.sort !== undefined) request.sorting = sortingOf(query.sort)
    // totalCount alone pages from the first group, as GraphQL's todoItemAggregateGroups does without paging.
    if (query.limit !== undefined || query.offset !== undefined || query.totalCount === true) {
      request.paging = { offset: (query.offset as number) ?? 0 }
      if (query.limit !== undefined) request.paging.limit = query.limit as number
    }
    if (query.totalCount !== undefined) request.totalCount = query.totalCount as boolean
    seriesOf(query, request)
    return { request, filter, format: (query.format as 'json' | 'csv') ?? 'json' }
  }
}
