import type { Context } from '../common/koa'

/**
 * The header a Feathers REST client sends to be answered in Feathers' shapes on the spec's routes, e.g.
 * `rest(url).fetch(fetch, { headers: { 'X-Query-Syntax': 'feathers' } })`.
 */
export const QUERY_SYNTAX_HEADER = 'x-query-syntax'

/**
 * Whether an HTTP request to a resource's base path speaks Feathers (its REST client, `$limit`, `$sort`,
 * `field[$gt]=...`) rather than the spec's REST dialect (`limit`, `offset`, equality parameters). Feathers
 * requests go on to Feathers' own REST transport. Only a plain equality query (`?completed=false`) reads the
 * same in both; it is the spec's unless the header says otherwise.
 */
export function speaksFeathers(ctx: Context, specTakesQuery: boolean): boolean {
  if (ctx.get(QUERY_SYNTAX_HEADER).toLowerCase() === 'feathers') return true
  // A list of records to create at once (multi) is Feathers'.
  if (Array.isArray((ctx.request as { body?: unknown }).body)) return true
  if (!ctx.querystring) return false
  // The spec's routes other than the list take no query parameters; Feathers' take a query.
  if (!specTakesQuery) return true
  for (const [name, value] of Object.entries(ctx.query)) {
    if (name.startsWith('$') || (value !== null && typeof value === 'object' && !Array.isArray(value)))
      return true
  }
  return false
}
