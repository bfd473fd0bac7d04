import { randomUUID } from 'node:crypto'
import {
  BadRequest,
  FeathersError,
  GeneralError,
  NotAuthenticated,
  NotFound,
  TooManyRequests
} from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import type { Params, RealTimeConnection } from '@feathersjs/feathers'
import type { ResolvedResource } from '../resource/resolved'
import type { ResourceParams } from '../model/records'
import { resourceService } from '../service/resource-service'
import { liveQueriesOf } from '../live/app-live-queries'
import { liveScope } from '../live/live-scope'
import type { ResolvedLiveOptions } from '../live/live-options'
import { toFilterOfQuery } from './live-query-filter'
import { andFilters } from '../query/filters'
import { hookedCall } from './external-call'
import { budgetsOf } from '../budgets/budgets'
import { PAID_ELSEWHERE } from '../budgets/rows-hook'

/** What a Feathers client asks to watch: a resource's `find` (default) or `aggregate`. */
export interface LiveQueryData {
  /** The resource's service path, e.g. `todo-items`. */
  path: string
  method?: 'find' | 'aggregate'
  /** The query, as the method would take it in `params.query`. */
  query?: Record<string, unknown>
  /** For `aggregate`: its request (`groupBy`, `count`, `sum`, ...), the method's first argument. */
  aggregate?: Record<string, unknown>
}

/** A watch started: its id, which every `result` event of it carries, and the first result. */
export interface LiveQueryStarted {
  id: string
  result: unknown
}

/** A new result of a watch, sent as the service's `result` event to the connection that started it only. */
export interface LiveQueryResult {
  id: string
  /** The new result; absent when the watch ended. */
  result?: unknown
  /** Why the watch ended (its call failed, the user signed out or another signed in): Feathers error JSON. */
  error?: object
}

const channelOf = (id: string) => `feathers-query/live/${id}`

/** Who a watch was asked by, to compare with who is signed in on its connection later. */
const userKey = (user: unknown) => JSON.stringify(user ?? null)

/**
 * Live queries for Feathers clients over a real-time transport: `create({ path, method, query })` answers the
 * method's result and watches it; each new result comes as a `result` event `{ id, result }` to that
 * connection alone; `remove(id)` stops it, and so does the connection's end. The method runs as the client's
 * own call (hooks, `authorize`, field rules), shared with every watcher of the same question and scope.
 */
export class LiveQueriesService {
  private readonly watches = new Map<RealTimeConnection, Map<string, () => void>>()
  /** Each watch's connection and the user it was asked by. */
  private readonly owners = new Map<string, { connection: RealTimeConnection; user: string }>()
  /** Set by Feathers' event mixin when the service is registered. */
  declare emit: (event: string, data: unknown) => boolean

  constructor(
    private readonly app: Application,
    private readonly resources: () => ResolvedResource[],
    private readonly options: ResolvedLiveOptions
  ) {}

  async create(data: LiveQueryData, params: Params = {}): Promise<LiveQueryStarted> {
    const connection = params.connection as RealTimeConnection | undefined
    if (!connection) {
      throw new BadRequest('A live query needs a real-time connection (socket.io) to send its results to')
    }
    const resource = this.resourceAt(data?.path)
    const method = data.method ?? 'find'
    if (method !== 'find' && method !== 'aggregate') {
      throw new BadRequest(`method must be 'find' or 'aggregate'`, {
        errors: [{ field: 'method', message: 'unknown' }]
      })
    }
    const own = this.watches.get(connection) ?? new Map<string, () => void>()
    // Watches still starting count too: a connection asking for many at once gets no more than the others.
    if (own.size >= this.options.maxPerConnection) {
      throw new TooManyRequests(
        `A connection watches at most ${this.options.maxPerConnection} live queries`,
        {
          code: 'TOO_MANY_LIVE_QUERIES'
        }
      )
    }
    const { query: _query, ...given } = params
    const caller = { ...given, [PAID_ELSEWHERE]: true }
    const query = data.query ?? {}
    const id = randomUUID()
    // The watch holds its place from now on; a disconnect or remove while it starts takes the place away.
    own.set(id, () => {})
    this.watches.set(connection, own)
    this.owners.set(id, { connection, user: userKey((params as { user?: unknown }).user) })
    let watching: Awaited<ReturnType<typeof this.watch>>
    try {
      // A watch is a subscription: it spends one of the caller's `subscriptions`, and its computations no rows.
      await budgetsOf(this.app)?.take(params, 'subscriptions', 1)
      watching = await this.watch(id, resource, method, data, query, caller, connection)
    } catch (error) {
      if (own.has(id)) this.stop(connection, id)
      throw error
    }
    if (!own.has(id)) {
      // Its connection ended (or it was removed) while its first result was computed.
      watching.stop()
      throw new NotFound(`Live query '${id}' stopped while it started`)
    }
    own.set(id, watching.stop)
    this.app.channel(channelOf(id)).join(connection)
    return { id, result: watching.first }
  }

  private async watch(
    id: string,
    resource: ResolvedResource,
    method: 'find' | 'aggregate',
    data: LiveQueryData,
    query: Record<string, unknown>,
    caller: Params,
    connection: RealTimeConnection
  ) {
    const service = this.app.service(resource.basePath)
    // What the transport would send of the method's answer: its dispatch (resolveExternal, hidden fields
    // stripped), never the result the hooks see.
    const compute = async () => {
      // Each computation its own copy: a hook may change the query it is given in place, and every later
      // computation must start from what the client sent.
      const params = { ...caller, query: structuredClone(query) }
      const args = method === 'find' ? [params] : [structuredClone(data.aggregate ?? {}), params]
      const context = await hookedCall(service, method, args)
      return context.dispatch !== undefined ? context.dispatch : context.result
    }
    const scope = await liveScope(resource, caller as ResourceParams, (target) =>
      resourceService(this.app, target)
    )
    return liveQueriesOf(this.app).watch({
      question: JSON.stringify([resource.basePath, method, query, data.aggregate ?? null]),
      scope: scope.key,
      compute,
      text: (result) => JSON.stringify(result),
      deliver: (result) => this.emit('result', { id, result } satisfies LiveQueryResult),
      fail: (error) => this.end(connection, id, error),
      root: {
        resource,
        filter:
          method === 'find'
            ? andFilters(scope.rootScope, toFilterOfQuery(resource, query))
            : toFilterOfQuery(resource, query)
      }
    })
  }

  async remove(id: string, params: Params = {}): Promise<{ id: string }> {
    const connection = params.connection as RealTimeConnection | undefined
    if (!connection || !this.watches.get(connection)?.has(String(id))) {
      throw new NotFound(`No live query '${id}' of this connection`)
    }
    this.stop(connection, String(id))
    return { id: String(id) }
  }

  /** Stops every watch of a connection that ended. */
  disconnected(connection: RealTimeConnection) {
    for (const id of [...(this.watches.get(connection)?.keys() ?? [])]) this.stop(connection, id)
  }

  /**
   * Ends every watch of a connection whose user changed (signed out, or another signed in): each computes
   * with the params it was asked with, and would keep sending what the user who left may read. Its watcher
   * hears why.
   */
  signedOff(connection: RealTimeConnection, user: unknown, why: string) {
    for (const [id, owner] of this.owners) {
      if (owner.connection === connection && owner.user !== userKey(user)) {
        this.end(connection, id, new NotAuthenticated(why))
      }
    }
  }

  /** Ends a watch with a last `result` event that says why, then stops it. */
  private end(connection: RealTimeConnection, id: string, error: unknown) {
    if (!this.watches.get(connection)?.has(id)) return
    this.watches.get(connection)?.get(id)?.()
    const json =
      error instanceof FeathersError ? error.toJSON() : new GeneralError('The live query failed').toJSON()
    // An application's `logout` listener may have had the connection leave every channel already.
    this.app.channel(channelOf(id)).join(connection)
    this.emit('result', { id, error: json } satisfies LiveQueryResult)
    // Its channel is left once the event was published (publishers run asynchronously).
    setTimeout(() => this.stop(connection, id), 0)
  }

  private stop(connection: RealTimeConnection, id: string) {
    this.owners.delete(id)
    const own = this.watches.get(connection)
    own?.get(id)?.()
    own?.delete(id)
    if (own?.size === 0) this.watches.delete(connection)
    this.app.channel(channelOf(id)).leave(connection)
  }

  private resourceAt(path: unknown): ResolvedResource {
    const resource = this.resources().find((candidate) => candidate.basePath === path)
    if (!resource) {
      throw new BadRequest(`path must name a resource's service`, {
        errors: [{ field: 'path', message: `no resource at '${String(path)}'` }]
      })
    }
    return resource
  }
}

/** Registers the live queries' service at `options.path`, its `result` events sent to their watcher only. */
export function registerLiveQueries(
  app: Application,
  resources: () => ResolvedResource[],
  options: ResolvedLiveOptions
) {
  const service = new LiveQueriesService(app, resources, options)
  app.use(options.path, service as never, { methods: ['create', 'remove'], events: ['result'] })
  const registered = app.service(options.path) as unknown as {
    publish?: (event: string, publisher: (data: LiveQueryResult) => unknown) => void
    hooks(hooks: object): void
  }
  // No `created` or `removed` event: a watch's first result is its caller's alone, and the app's publishers
  // (every connection, say) and feathers-sync would carry it to others.
  registered.hooks({
    after: {
      all: [
        (context: { event: string | null }) => {
          context.event = null
        }
      ]
    }
  })
  registered.publish?.('result', (data) => app.channel(channelOf(data.id)))
  // The registered service is the one Feathers made an event emitter of.
  const emitting = registered as unknown as LiveQueriesService
  app.on('disconnect', (connection: RealTimeConnection) => service.disconnected(connection))
  // Its watches compute with the params it had when it asked: once no one is signed in on the connection,
  // they would keep sending what the user who left may read.
  app.on('logout', (_result: unknown, params: { connection?: RealTimeConnection } | undefined) => {
    if (params?.connection)
      emitting.signedOff(params.connection, undefined, 'Signed out: the live query ended')
  })
  app.on('login', (result: { user?: unknown }, params: { connection?: RealTimeConnection } | undefined) => {
    if (params?.connection) {
      emitting.signedOff(params.connection, result?.user, 'Another user signed in: the live query ended')
    }
  })
}
