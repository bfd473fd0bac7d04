import type { Context, Next } from '../common/koa'
import type { ResolvedResource } from '../resource/resolved'

export function importPath(resource: ResolvedResource) {
  return `/${resource.basePath}/import`
}

/** Where a streamed import's Content-Type waits while the body parser looks at the request. */
const IMPORT_MEDIA = Symbol('feathers-query import media type')

/**
 * Koa middleware the plugin puts first among the application's: on `POST /{basePath}/import` it takes the
 * Content-Type away until the import route reads it. The application's body parser (koa-body reads every
 * `text/*` body whole, up to 56 kB) then leaves the body alone, for the route to stream it.
 */
export function keepImportBodiesStreaming(resources: () => ResolvedResource[]) {
  return (ctx: Context, next: Next) => {
    if (ctx.method === 'POST' && resources().some((resource) => ctx.path === importPath(resource))) {
      ;(ctx.state as Record<symbol, unknown>)[IMPORT_MEDIA] = ctx.req.headers['content-type'] ?? ''
      delete ctx.req.headers['content-type']
    }
    return next()
  }
}

/** The import request's Content-Type, put back; undefined on any other request. */
export function importMediaType(ctx: Context): string | undefined {
  const state = ctx.state as Record<symbol, unknown>
  const media = state[IMPORT_MEDIA] as string | undefined
  if (media !== undefined) {
    if (media) ctx.req.headers['content-type'] = media
    delete state[IMPORT_MEDIA]
    return media
  }
  return undefined
}

/** Whether the request is an import whose body is the import route's to read. */
export function isImportRequest(ctx: Context) {
  return (ctx.state as Record<symbol, unknown>)[IMPORT_MEDIA] !== undefined
}
