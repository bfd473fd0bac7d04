import { BadRequest } from '@feathersjs/errors'
import { createContext, type HookContext } from '@feathersjs/feathers'
import type { Context } from '../common/koa'
import type { ResolvedResource } from '../resource/resolved'
import type { ResourceRecord } from '../model/records'
import { restParams } from './params'
import { requireJsonMedia } from './request-body'

/** The preference of RFC 7240 that makes a POST an upsert, as PostgREST names it. */
export const MERGE_DUPLICATES = 'resolution=merge-duplicates'

/**
 * The `resolution` a request's `Prefer` header asks for (RFC 7240: preferences separated by commas, each
 * `name[=value]` with parameters after `;`, names case-insensitive, values maybe quoted), or undefined.
 */
export function preferredResolution(ctx: Context): string | undefined {
  const header = ctx.get('prefer')
  if (!header) return undefined
  for (const preference of header.split(',')) {
    const [token] = preference.split(';')
    const at = token.indexOf('=')
    const name = (at < 0 ? token : token.slice(0, at)).trim().toLowerCase()
    if (name !== 'resolution') continue
    return at < 0
      ? ''
      : token
          .slice(at + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1')
  }
  return undefined
}

/**
 * `POST /{basePath}` with `Prefer: resolution=merge-duplicates`: the body (a record, or a list where `multi`
 * allows create) is upserted by the resource's key. 201 when every record was created, 200 when any existing
 * one changed, and `Preference-Applied` saying the preference was honoured. Any other resolution, or a
 * resource without a key, is a 400: the client asked for something this server would not do.
 */
export async function upsertRoute(
  ctx: Context,
  resource: ResolvedResource,
  service: unknown,
  resolution: string,
  serialize: (record: ResourceRecord) => unknown
) {
  if (resolution !== 'merge-duplicates') {
    throw new BadRequest(`Prefer: resolution=${resolution} is not supported; upsert with ${MERGE_DUPLICATES}`)
  }
  if (!resource.upsertKey) {
    throw new BadRequest(
      `${resource.name} has no upsert key, so Prefer: ${MERGE_DUPLICATES} does not apply (upsert: { key: [...] })`
    )
  }
  requireJsonMedia(ctx)
  const body = ctx.request.body
  if (body === null || typeof body !== 'object') {
    throw new BadRequest('The JSON body must be an object or a list of objects')
  }
  const base = createContext(service as never, 'upsert', { http: {} })
  const context = (await (service as Record<string, (...args: unknown[]) => Promise<HookContext>>).upsert(
    body,
    restParams(ctx),
    base
  )) as HookContext
  const answer = (context.dispatch !== undefined ? context.dispatch : context.result) as
    ResourceRecord | ResourceRecord[]
  ctx.body = Array.isArray(answer) ? answer.map(serialize) : serialize(answer)
  const events = context.writtenEvents ?? []
  ctx.status = events.length > 0 && events.every((event) => event === 'created') ? 201 : 200
  ctx.set('Preference-Applied', MERGE_DUPLICATES)
}
