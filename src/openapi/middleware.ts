import type { Context, Next } from '../common/koa'
import type { OpenApiDocumentOptions } from './document'
import type { OpenApiDocument } from './types'

export interface OpenApiOptions extends OpenApiDocumentOptions {
  /** Where the document is served as JSON (default `/openapi.json`). */
  path?: string
}

/** Serves a document built once at start-up: the resources cannot change while the app runs. */
export function openApiMiddleware(document: OpenApiDocument, path = '/openapi.json') {
  const body = JSON.stringify(document)
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== path || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next()
    ctx.type = 'application/json'
    ctx.body = body
  }
}
