import type { Application } from '@feathersjs/koa'
import { PROTOTYPE_KEYS } from '../common/plain-json'

/**
 * Feathers' service router keeps path segments as keys of plain objects, so a path segment named like an
 * `Object.prototype` property (`/todo-items/__proto__`, `/todo-items/constructor`) makes its lookup throw,
 * which every transport (REST and socket.io) answers with a 500. Such a path names no service and no record
 * here: the lookup finds nothing, and the request is answered like any unknown path.
 */
/** A path segment named like an `Object.prototype` property (one test per request, no array of segments). */
const PROTOTYPE_SEGMENT = new RegExp(`(?:^|/)(?:${[...PROTOTYPE_KEYS].join('|')})(?:/|$)`)

export function guardServiceLookup(app: Application) {
  const lookup = app.lookup?.bind(app)
  if (!lookup || (app.lookup as { guarded?: boolean }).guarded) return
  const guarded = (path: string) => (PROTOTYPE_SEGMENT.test(String(path)) ? null : lookup(path))
  app.lookup = Object.assign(guarded, { guarded: true }) as typeof app.lookup
}
