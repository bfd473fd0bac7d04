import type { Knex } from 'knex'
import { ConfigurationError } from '../common/errors'
import type { Context, Next } from '../common/koa'
import { dialectOf } from '../dialect/dialect-of'
import { DEFAULTS } from '../resource/defaults'
import { isShuttingDown } from './shutdown-state'

/** `feathersQuery({ health })`: the readiness and liveness routes, off unless given. */
export interface HealthOptions {
  /** Where the routes are: `<path>/ready` and `<path>/live` (default `/health`). */
  path?: string
  /** How long a database may take to answer `select 1` before the readiness route answers 503 (ms, default 1000). */
  timeout?: number
}

type Probe = 'up' | 'down' | 'timeout'

/**
 * One `select 1` at a time per database: while a hung database has not answered, later probes wait for the
 * same statement rather than each holding a pooled connection, or waiting for one, of their own.
 */
const pending = new WeakMap<Knex, Promise<Probe>>()

function probe(db: Knex, timeout: number): Promise<Probe> {
  let running = pending.get(db)
  if (!running) {
    running = Promise.resolve(db.raw('select 1')).then(
      () => 'up' as const,
      () => 'down' as const
    )
    pending.set(db, running)
    void running.finally(() => pending.delete(db))
  }
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<Probe>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeout)
  })
  return Promise.race([running, late]).finally(() => clearTimeout(timer))
}

async function readiness(databases: Knex[], timeout: number) {
  const results = await Promise.all(
    databases.map(async (db) => {
      const started = performance.now()
      const status = await probe(db, timeout)
      const milliseconds = Math.round(performance.now() - started)
      // The dialect's name, not knex's `client` option: that may be a class, whose source would be served.
      return { client: dialectOf(db).name, status, milliseconds }
    })
  )
  const ready = results.every((result) => result.status === 'up')
  return { ready, body: { status: ready ? 'ready' : 'unavailable', databases: results } }
}

/**
 * Refuses, at start-up, what the configuration's schema refuses: a path without its leading `/` would serve
 * routes that never match.
 */
export function checkHealthOptions(options: HealthOptions | boolean) {
  if (!options || typeof options !== 'object') return
  const { path, timeout } = options
  if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/')))
    throw new ConfigurationError(
      `feathersQuery({ health }): path must start with "/", not ${JSON.stringify(path)}`
    )
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    throw new ConfigurationError(
      `feathersQuery({ health }): timeout must be a positive integer (ms), not ${timeout}`
    )
}

/**
 * `GET <path>/ready`: 200 `{status: 'ready', databases}` when every database the resources use answers
 * `select 1` within `timeout`, else 503 naming each database's state (`up`, `down`, `timeout`), with no
 * driver message; 503 `{status: 'stopping'}` once a graceful shutdown began, so that a load balancer sends no
 * more. `GET <path>/live`: 200 while the process serves HTTP at all, touching no database.
 */
export function healthMiddleware(options: HealthOptions, databases: Knex[]) {
  const path = options.path ?? DEFAULTS.health.path
  const timeout = options.timeout ?? DEFAULTS.health.timeout
  const readyPath = `${path.replace(/\/$/, '')}/ready`
  const livePath = `${path.replace(/\/$/, '')}/live`
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== readyPath && ctx.path !== livePath) return next()
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    ctx.set('Cache-Control', 'no-store')
    if (ctx.path === livePath) {
      ctx.body = { status: 'alive' }
      return
    }
    if (isShuttingDown(ctx.app)) {
      ctx.status = 503
      ctx.body = { status: 'stopping' }
      return
    }
    const { ready, body } = await readiness(databases, timeout)
    ctx.status = ready ? 200 : 503
    ctx.body = body
  }
}
