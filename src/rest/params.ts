import type { Context } from '../common/koa'
import type { ResourceParams } from '../model/records'
import type { ResourceQuery } from '../model/query'
import { BUDGET_HEADERS } from '../budgets/budgets'

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
  // Whose budget the call spends (an anonymous caller's address), and where it tells what is left.
  params.ip = ctx.ip
  ;(params as Record<symbol, unknown>)[BUDGET_HEADERS] = (headers: Record<string, string>) => ctx.set(headers)
  return params
}
