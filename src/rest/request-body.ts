import { BadRequest, FeathersError } from '@feathersjs/errors'
import type { Context } from 'koa'

/** 415: the body is not JSON, so nothing in it can be trusted to mean what the client intended. */
export class UnsupportedMediaType extends FeathersError {
  constructor(message: string) {
    super(message, 'UnsupportedMediaType', 415, 'unsupported-media-type', undefined)
  }
}

/** A write's body must be a JSON object; checked after the query parameters, before anything else. */
export function requireJsonObject(ctx: Context) {
  if (!ctx.is('application/json')) {
    throw new UnsupportedMediaType('Request bodies must be sent as Content-Type: application/json')
  }
  const body = ctx.request.body
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('The JSON body must be an object')
  }
}
