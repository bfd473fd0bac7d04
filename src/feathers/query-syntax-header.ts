import type { Context } from '../common/koa'
import { QUERY_SYNTAX_HEADER } from '../common/query-syntax'

// In common/, as `feathers-query/client` sends it too and must load nothing of the server.
export { QUERY_SYNTAX_HEADER }

/** The header Feathers' REST client sends with a custom method's POST (`aggregate`). */
const SERVICE_METHOD_HEADER = 'x-service-method'

/**
 * Whether an HTTP request to a resource's base path is a Feathers client's, answered by Feathers' REST
 * transport in Feathers' shapes, rather than the spec's routes'. Only the caller decides, so that one URL
 * never answers two shapes unasked: the `X-Query-Syntax: feathers` header (which the `feathers-query/client`
 * services send), a custom method's `X-Service-Method`, or a list of records to create at once, which only
 * Feathers' `create` takes. A record's routes take no query parameters, and their answer is the record on
 * either side: a query there (`?$select=title`) is Feathers'.
 */
export function speaksFeathers(ctx: Context, specTakesQuery: boolean): boolean {
  // A header set both on the connection and per call may arrive joined: "feathers, feathers".
  const syntax = ctx.get(QUERY_SYNTAX_HEADER).split(',')
  if (syntax.every((value) => value.trim().toLowerCase() === 'feathers')) return true
  if (ctx.get(SERVICE_METHOD_HEADER)) return true
  if (Array.isArray((ctx.request as { body?: unknown }).body)) return true
  return !specTakesQuery && !!ctx.querystring
}

/**
 * A query parameter of Feathers' syntax sent to the spec's list without the header: a 400 that says how a
 * Feathers client asks for Feathers' answers, rather than a page in the other shape.
 */
export function feathersParameterWithoutHeader(ctx: Context): string | undefined {
  return Object.keys(ctx.query).find((name) => name.startsWith('$'))
}
