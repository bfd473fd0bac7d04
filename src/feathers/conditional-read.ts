import { createHash, hash } from 'node:crypto'
import type { Context } from '../common/koa'
import type { ResourceCachingOptions } from '../resource/definition'
import { DEFAULTS } from '../resource/defaults'
import { writeGenerationOf } from './write-generation'
import { BoundedCache } from '../common/bounded-cache'

/** How reads answer conditional requests (`ETag`, `If-None-Match`), for the whole application. */
export interface CachingOptions {
  /** `ETag` and `Cache-Control` on reads and 304s for unchanged data (default true). */
  enabled?: boolean
  /**
   * The `Cache-Control` of every tagged read and its 304s (default `private, no-cache`: the browser keeps the
   * answer and revalidates it each time; shared caches keep nothing).
   */
  cacheControl?: string
  /**
   * Request headers that never change an answer, beside those the plugin ignores (conditional, hop-by-hop,
   * tracing and `Accept-Encoding`). Every other header the request carries is part of its validator.
   */
  ignoreHeaders?: string[]
}

export interface ResolvedCaching {
  enabled: boolean
  cacheControl: string
  ignoreHeaders: ReadonlySet<string>
  /** The header shapes seen, by the answering header names in the order a request carried them. */
  headerShapes: BoundedCache<HeaderShape>
}

/**
 * The headers that may change a read's answer, as requests of one client carry them (the same names in the
 * same order): their names sorted, and the `Vary` that names them, made once rather than per request.
 */
interface HeaderShape {
  names: string[]
  /** The names sorted, joined by commas (which no header name holds). */
  key: string
  vary: string
}

/** Headers that say nothing about what a read answers, only about the connection, the cache or a trace. */
const IGNORED_HEADERS = [
  'if-none-match',
  'if-match',
  'if-modified-since',
  'if-unmodified-since',
  'if-range',
  'cache-control',
  'pragma',
  'connection',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'accept-encoding',
  'traceparent',
  'tracestate',
  'baggage',
  'x-request-id'
]

/** Always named in `Vary`: who asks and in which form decide the answer even when a request lacks them. */
const ALWAYS_VARY = ['Accept', 'Authorization', 'Cookie']
const ALWAYS_VARIED = new Set(ALWAYS_VARY.map((name) => name.toLowerCase()))

/** Header shapes kept per caching setting: clients choose header names, so their number and size are bounded. */
const MAX_HEADER_SHAPES = 200
const MAX_HEADER_SHAPES_WEIGHT = 2 ** 20

/** Whether a resource's reads are cached: its own choice, else the application's, else the default. */
export const cachingEnabled = (app: CachingOptions | undefined, resource?: ResourceCachingOptions) =>
  resource?.enabled ?? app?.enabled ?? DEFAULTS.caching.enabled

export function resolveCaching(
  app: CachingOptions | undefined,
  resource?: ResourceCachingOptions
): ResolvedCaching {
  return {
    enabled: cachingEnabled(app, resource),
    cacheControl: resource?.cacheControl ?? app?.cacheControl ?? DEFAULTS.caching.cacheControl,
    ignoreHeaders: new Set([
      ...IGNORED_HEADERS,
      ...(app?.ignoreHeaders ?? []).map((name) => name.toLowerCase())
    ]),
    headerShapes: new BoundedCache(MAX_HEADER_SHAPES, MAX_HEADER_SHAPES_WEIGHT, (shape) => shape.key.length)
  }
}

/**
 * The shape of the request's headers that may change its answer (every one not ignored). Its `vary` is what
 * an answer names in `Vary`, so that a cache keeps one copy per caller and never revalidates one caller's copy
 * for another.
 */
export function answeringHeaders(ctx: Context, caching: ResolvedCaching): HeaderShape {
  let arrived = ''
  for (const name in ctx.req.headers) if (!caching.ignoreHeaders.has(name)) arrived += `${name},`
  return caching.headerShapes.get(arrived, () => {
    const names = arrived.split(',').slice(0, -1).sort()
    const varied = names.filter((name) => !ALWAYS_VARIED.has(name))
    return { names, key: names.join(','), vary: [...ALWAYS_VARY, ...varied].join(', ') }
  })
}

/**
 * The validator of a read: the request (path, query string; a GraphQL GET carries its document, variables
 * and operation name there), everything about the caller the hooks and `authorize` can see (every header not
 * ignored, and what the application's middleware put in `ctx.feathers`), and the application's write
 * generation with its epoch. Undefined when the caller's side cannot be written down (then nothing is
 * cached).
 *
 * It is taken before the read runs: a write that commits while the read runs moves the generation on, so the
 * answer, whichever state it saw, carries a tag that is already behind and is never confirmed by a 304.
 */
function readValidator(ctx: Context, caching: ResolvedCaching) {
  const generation = writeGenerationOf(ctx.app)
  const shape = answeringHeaders(ctx, caching)
  const headers = ctx.req.headers
  let caller: string
  try {
    caller = JSON.stringify([shape.key, shape.names.map((name) => headers[name]), ctx.feathers ?? null])
  } catch {
    return undefined
  }
  const digest = sha256(
    JSON.stringify([generation.epoch, generation.current(), ctx.path, ctx.querystring]) + caller
  )
  // Weak: the same data may go out in several content codings (a compression middleware keeps the tag).
  return { etag: `W/"${digest}"`, shape }
}

/**
 * SHA-256 in base64url: Node's one-shot `crypto.hash` (from 20.12) where it exists, which makes no `Hash`
 * object; `createHash` on the earlier Node 20 releases the package supports.
 */
const sha256: (text: string) => string =
  typeof hash === 'function'
    ? (text) => hash('sha256', text, 'base64url')
    : (text) => createHash('sha256').update(text).digest('base64url')

/** Whether an `If-None-Match` list holds the tag (the weak comparison RFC 9110 prescribes for it). */
export function listsTag(ifNoneMatch: string, etag: string) {
  const opaque = etag.replace(/^W\//, '')
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque)
}

/**
 * Whether the request's bearer token is a JWT past its `exp`. A tag is only ever given to a request whose
 * token was verified, and the token's exact text is part of the tag, so its claims can be read unverified
 * here: once it has expired, the request goes to the hooks and gets their 401 rather than a 304.
 */
function expiredToken(ctx: Context) {
  const match = /^(?:(?:bearer|jwt)\s+)?[\w-]+\.([\w-]+)\.[\w-]*$/i.exec(ctx.get('authorization').trim())
  if (!match) return false
  try {
    const { exp } = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8')) as { exp?: unknown }
    return typeof exp === 'number' && exp * 1000 <= Date.now()
  } catch {
    return false
  }
}

/** A tagged answer's `ETag`, `Cache-Control` and `Vary` (who asks and in which form, and the `shape`'s). */
export function tag(ctx: Context, caching: ResolvedCaching, etag: string, shape: HeaderShape) {
  ctx.set('ETag', etag)
  ctx.set('Cache-Control', caching.cacheControl)
  // Appended to a `Vary` the application's middleware set (CORS's `Origin`, say); else set whole.
  if (ctx.response.get('Vary')) ctx.vary([...ALWAYS_VARY, ...shape.names])
  else ctx.set('Vary', shape.vary)
}

/**
 * Answers a GET (or HEAD) read conditionally: a 304 without running anything (no hook, no SQL) when the
 * request's `If-None-Match` holds the tag its validator makes now; otherwise `answer` runs, and a 200 that
 * `succeeded` accepts gets the tag, `Cache-Control` and `Vary`. Errors are never tagged.
 */
export async function conditionalRead(
  ctx: Context,
  caching: ResolvedCaching,
  answer: () => Promise<unknown>,
  succeeded: () => boolean = () => true
): Promise<void> {
  const validator =
    caching.enabled && (ctx.method === 'GET' || ctx.method === 'HEAD')
      ? readValidator(ctx, caching)
      : undefined
  if (!validator) {
    await answer()
    return
  }
  const ifNoneMatch = ctx.get('if-none-match')
  if (ifNoneMatch && listsTag(ifNoneMatch, validator.etag) && !expiredToken(ctx)) {
    tag(ctx, caching, validator.etag, validator.shape)
    ctx.status = 304
    return
  }
  await answer()
  if (ctx.status === 200 && succeeded()) tag(ctx, caching, validator.etag, validator.shape)
}
