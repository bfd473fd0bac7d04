import { BadRequest } from '@feathersjs/errors'
import type { Context } from '../common/koa'
import { badInput, UnsupportedMediaType } from '../common/errors'
import { isImportRequest } from './import-body'

export function requireJsonMedia(ctx: Context) {
  if (!ctx.is('application/json')) {
    throw new UnsupportedMediaType('Request bodies must be sent as Content-Type: application/json')
  }
}

/** A write's body must be a JSON object; checked after the query parameters, before anything else. */
export function requireJsonObject(ctx: Context) {
  requireJsonMedia(ctx)
  const body = ctx.request.body
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('The JSON body must be an object')
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH'])

/**
 * Koa middleware in front of a resource service's HTTP handlers, Feathers' REST transport included: a write
 * carries a JSON object (or, for a multi create, a list). Without it Feathers would call the method with no
 * data (a body in another media type is not parsed), and a multi patch would stamp every record it reaches.
 */
export function requireJsonWrites(ctx: Context, next: () => Promise<unknown>) {
  // An import's body is CSV or NDJSON, which its route streams.
  if (WRITES.has(ctx.method) && !isImportRequest(ctx)) {
    requireJsonMedia(ctx)
    const body = ctx.request.body
    if (body === null || typeof body !== 'object') {
      throw new BadRequest('The JSON body must be an object (or a list of them for a multi create)')
    }
  }
  return next()
}

/** zlib's and brotli's decoding failures, as Node codes them: Z_DATA_ERROR, Z_BUF_ERROR, ERR__ERROR_… */
const DECODING_FAILURE = /^(Z_|ERR__ERROR_)/

/**
 * The body parser inflates a body by its Content-Encoding (gzip, deflate, br; others are its 415), counting
 * its size limit after inflating. A body that is not what the header says (plain JSON sent as gzip, a stream
 * cut short) makes zlib fail: the client's mistake, a 400 naming the header rather than a 500.
 */
export function undecodableBody(error: unknown, ctx: Context) {
  const code = (error as { code?: unknown })?.code
  const encoding = ctx.get('content-encoding')
  if (!encoding || typeof code !== 'string' || !DECODING_FAILURE.test(code)) return undefined
  const summary = `The request body is not valid ${encoding} data`
  const message = `does not match the body: send it compressed as ${encoding}, or leave the header out`
  return badInput([{ field: 'headers.content-encoding', message }], summary)
}
