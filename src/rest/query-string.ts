import { BadRequest } from '@feathersjs/errors'
import type { Context, Next } from '../common/koa'
import { badInput } from '../common/errors'
import { PROTOTYPE_KEYS } from '../common/plain-json'

/** As many parameters as Koa's and Feathers' query-string parsers read; they drop the rest without a word. */
export const MAX_QUERY_PARAMETERS = 1000

/**
 * `qs` drops a parameter whose name or bracketed part is a property every object has (`id[toString]=1`,
 * `title[constructor]=x`, `__proto__[x]=1`), so the condition it held would be silently ignored.
 */
function refusePrototypeKeys(name: string) {
  const parts = name.split(/[[\]]+/).filter((part) => part !== '')
  const named = parts.find((part) => PROTOTYPE_KEYS.has(part))
  if (named === undefined) return
  throw badInput([
    { field: name, message: `names "${named}", a property every object has: no field or operator` }
  ])
}

/**
 * Refuses a query string that the parsers would read only in part: more parameters than they keep, or
 * percent-escapes that are not UTF-8 (which they pass on as they are, or as replacement characters), or a
 * name they drop (`refusePrototypeKeys`). Either way a filter would silently be left out or changed; a 400
 * says so instead.
 */
export function checkQueryString(ctx: Context, next: Next) {
  const text = ctx.querystring
  if (text) {
    const parameters = text.split('&').filter((parameter) => parameter !== '')
    if (parameters.length > MAX_QUERY_PARAMETERS) {
      const given = parameters.length
      throw new BadRequest(
        `A query string may hold at most ${MAX_QUERY_PARAMETERS} parameters (${given} given)`
      )
    }
    for (const parameter of parameters) {
      let decoded: string
      try {
        decoded = decodeURIComponent(parameter.replace(/\+/g, ' '))
      } catch {
        throw new BadRequest(`The query string is not valid UTF-8 near "${parameter.slice(0, 40)}"`)
      }
      refusePrototypeKeys(decoded.split('=')[0])
    }
  }
  return next()
}
