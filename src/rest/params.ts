import type { Context } from '../common/koa'
import type { ResourceParams } from '../model/records'
import type { ResourceQuery } from '../model/query'

/**
 * Feathers params for a service call made on behalf of an HTTP request: what Feathers' own Koa transport
 * puts in `ctx.feathers` (e.g. `authentication` from parseAuthentication), the provider and the headers.
 */
export function restParams(ctx: Context, query: ResourceQuery = {}): ResourceParams {
  const params: ResourceParams = Object.assign({}, ctx.feathers as object)
  params.provider = 'rest'
  params.headers = ctx.req.headers
  params.query = query
  params.queryModel = true
  return params
}
