import type Router from '@koa/router'
import type { Application } from '@feathersjs/koa'
import { stringify } from 'csv-stringify/sync'
import type { Context } from '../common/koa'
import type { ResolvedResource } from '../resource/resolved'
import { resourceService } from '../service/resource-service'
import { externalCall } from '../feathers/external-call'
import {
  AGGREGATE_FUNCTIONS,
  type AggregatePage,
  type AggregateRequest,
  type AggregateSelection,
  type AggregateResponse
} from '../model/aggregate'
import { restParams } from './params'
import { aggregateQueryParser, asAggregateParameters } from './aggregate-query'
import { conditionalRead, type ResolvedCaching } from '../feathers/conditional-read'

export function aggregatePath(resource: ResolvedResource) {
  return `/${resource.basePath}/aggregate`
}

type CsvColumn = [name: string, value: (response: AggregateResponse) => unknown]

/** A column read along its dotted name: `groupBy.todoItem.completed`, `previous.count.id`. */
const pathColumn = (name: string): CsvColumn => [
  name,
  (response) => {
    let value: unknown = response
    for (const key of name.split('.')) value = (value as Record<string, unknown> | undefined)?.[key]
    return value
  }
]

/**
 * The CSV columns of a request: `groupBy.<field>` for each group key (a related one nested:
 * `groupBy.todoItem.completed`), then `<function>.<field>`, `percentile(<p>).<field>`, then
 * `running.<function>.<field>`, `previous.…` and `periodAgo.…`. Field names hold no dots.
 */
function csvColumns(request: AggregateRequest) {
  const columns = (request.groupBy ?? []).map((group) => pathColumn(`groupBy.${group.field}`))
  const values = (prefix: string, selection: AggregateSelection) => {
    for (const fn of AGGREGATE_FUNCTIONS) {
      for (const field of new Set(selection[fn] ?? [])) columns.push(pathColumn(`${prefix}${fn}.${field}`))
    }
  }
  values('', request)
  const named = new Set<string>()
  for (const { p, fields } of request.percentile ?? []) {
    for (const field of fields) {
      const name = `percentile(${p}).${field}`
      if (named.has(name)) continue
      named.add(name)
      columns.push([name, (response) => response.percentile?.[String(p)]?.[field]])
    }
  }
  for (const member of ['running', 'previous', 'periodAgo'] as const) {
    if (request[member]) values(`${member}.`, request[member])
  }
  return columns
}

function csvOf(request: AggregateRequest, responses: AggregateResponse[]) {
  const columns = csvColumns(request)
  const rows = responses.map((response) => columns.map(([, value]) => value(response) ?? null))
  return stringify([columns.map(([name]) => name), ...rows], {
    quoted_string: true,
    escape_formulas: true,
    record_delimiter: '\n',
    cast: { boolean: (value) => (value ? 'true' : 'false') }
  })
}

/**
 * `GET /{basePath}/aggregate`: the GraphQL aggregate as a query string (see `aggregate-query.ts`), through the
 * service's `aggregate` method like GraphQL, so hooks, authorize and defaultFilter apply. Answers
 * `{nodes, pageInfo, totalCount?}` as JSON, or the groups as CSV (`format=csv` or `Accept: text/csv`).
 * Registered before `/:id`, so `aggregate` is never taken for an id on resources with aggregates.
 */
export function aggregateRoute(
  router: Router,
  app: Application,
  resource: ResolvedResource,
  caching: ResolvedCaching
) {
  const parse = aggregateQueryParser(resource)
  const answer = async (ctx: Context) => {
    const { request, filter, format } = parse(ctx.query)
    const service = resourceService(app, resource)
    let result: AggregateResponse[] | AggregatePage
    try {
      result = (await externalCall(service, 'aggregate', [
        request,
        restParams(ctx, { filter })
      ])) as typeof result
    } catch (error) {
      throw asAggregateParameters(error)
    }
    const page: AggregatePage = Array.isArray(result)
      ? { data: result, limit: result.length, skip: 0, hasNextPage: false }
      : result
    const csv =
      format === 'csv' ||
      (ctx.query.format === undefined && ctx.accepts('application/json', 'text/csv') === 'text/csv')
    if (csv) {
      ctx.type = 'text/csv; charset=utf-8'
      ctx.attachment(`${resource.basePath.split('/').pop()}-aggregate.csv`)
      if (page.total !== undefined) ctx.set('X-Total-Count', String(page.total))
      ctx.body = csvOf(request, page.data)
      return
    }
    ctx.body = {
      nodes: page.data,
      pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: page.skip > 0 },
      ...(page.total === undefined ? {} : { totalCount: page.total })
    }
  }
  router.get(aggregatePath(resource), (ctx: Context) => conditionalRead(ctx, caching, () => answer(ctx)))
}
