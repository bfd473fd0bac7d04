import { spendOnOperation } from '../../budgets/graphql-operation'
import { NotAuthenticated } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import {
  GraphQLError,
  specifiedRules,
  subscribe,
  type ExecutionArgs,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule
} from 'graphql'
import type { Context, ServerOptions } from 'graphql-ws'
import { useServer, type Extra } from 'graphql-ws/use/ws'
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'
import type { ResolvedResource } from '../../resource/resolved'
import { resourceService } from '../../service/resource-service'
import type { ResourceParams } from '../../model/records'
import { graphqlContextOf, type SubscriptionSource } from '../fields/context'
import { eventStream } from './event-stream'
import { connectionAdmission, type ConnectionLimits } from '../../common/connection-admission'
import { ResourceEvents } from './resource-events'
import { copyWith } from '../../common/copy-with'
import { countLimitRefusal, countRefusal } from '../../telemetry/telemetry'
import type { GraphqlContext } from '../fields/context'
import { liveOperation } from './live-operation'

/** Close code of a connection whose client left more than `maxQueuedEvents` events of a subscription unread. */
export const SLOW_CONSUMER_CLOSE_CODE = 4429
/** Close code of a connection refused for the server's or its user's limit of connections. */
const TOO_MANY_CONNECTIONS_CLOSE_CODE = 4429
/** Close code of a connection whose access token expired (as a 401 would say over HTTP). */
const TOKEN_EXPIRED_CLOSE_CODE = 4401

export interface WebSocketOptions {
  path: string
  schema: GraphQLSchema
  /** Parses a document, or refuses it with a GraphQLError (too large, unparsable). */
  parse(source: string): DocumentNode
  validate(
    schema: GraphQLSchema,
    document: DocumentNode,
    rules?: readonly ValidationRule[]
  ): readonly GraphQLError[]
  rules: readonly ValidationRule[]
  formatError(error: GraphQLError): GraphQLError
  /** Refuses variables the execution must not see (nested too deep), as over HTTP. */
  checkVariables(variables: unknown): GraphQLError | undefined
  limits: ConnectionLimits & {
    maxConcurrentStatements: number
    maxSubscriptions: number
    maxQueuedEvents: number
    maxMessageBytes: number
  }
}

type ConnectionPayload = Record<string, unknown> | undefined
type ConnectionExtra = Extra & Record<PropertyKey, unknown>
type ConnectionContext = Context<ConnectionPayload, ConnectionExtra>

/** The access token a client sent in `connectionParams`: `accessToken`, or an `Authorization: Bearer` value. */
function tokenOf(connectionParams: Record<string, unknown> | undefined) {
  if (!connectionParams) return undefined
  if (typeof connectionParams.accessToken === 'string') return connectionParams.accessToken
  const header = connectionParams.authorization ?? connectionParams.Authorization
  const match = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header) : null
  return match?.[1]
}

/**
 * The params every call of a connection carries: the upgrade request's headers and, with a JWT in
 * `connectionParams`, the authentication (so guards such as `authenticate('jwt')` verify it on each
 * subscription) and the user it names (for `authorize` on each event). A token the application's
 * authentication service refuses closes the connection (4403 Forbidden); one that expires later ends it
 * then (4401), as Feathers ends a socket.io connection, with every subscription it opened.
 */
interface Connection {
  params: ResourceParams
  /** Who holds the connection, for the limits: the token's subject, or the address of an anonymous caller. */
  caller: string
  /** When the token expires, in epoch milliseconds. */
  expires?: number
}

async function connectionOf(app: Application, context: ConnectionContext): Promise<Connection> {
  const params: ResourceParams = {
    headers: context.extra.request.headers,
    ip: context.extra.request.socket.remoteAddress
  }
  const accessToken = tokenOf(context.connectionParams)
  if (accessToken === undefined) {
    return { params, caller: `address ${context.extra.request.socket.remoteAddress}` }
  }
  const authentication = { strategy: 'jwt', accessToken }
  const service = (app as { defaultAuthentication?: () => unknown }).defaultAuthentication?.() as
    | { authenticate(data: unknown, params: unknown, ...strategies: string[]): Promise<{ user?: unknown }> }
    | undefined
  if (!service) throw new NotAuthenticated('This application has no authentication service')
  const result = (await service.authenticate(authentication, { provider: 'graphql' }, 'jwt')) as {
    user?: unknown
    authentication?: { payload?: { sub?: unknown; exp?: unknown } }
  }
  const { sub, exp } = result.authentication?.payload ?? {}
  return {
    params: copyWith(params, { authentication, user: result.user }) as ResourceParams,
    caller: `user ${String(sub)}`,
    expires: typeof exp === 'number' ? exp * 1000 : undefined
  }
}

/** The subscribers of each resource, made on the first subscription to it. */
function eventHubs(app: Application) {
  const hubs = new Map<ResolvedResource, ResourceEvents>()
  return {
    of(resource: ResolvedResource) {
      let hub = hubs.get(resource)
      if (!hub) {
        hub = new ResourceEvents(resource, resourceService(app, resource) as never)
        hubs.set(resource, hub)
      }
      return hub
    },
    subscriberCount: (resource: ResolvedResource) => hubs.get(resource)?.size ?? 0
  }
}

/** The events a connection's subscriptions hear; one that leaves too many unread loses its connection. */
function eventsOf(
  hubs: ReturnType<typeof eventHubs>,
  maxQueuedEvents: number,
  params: ResourceParams,
  socket: Extra['socket']
): SubscriptionSource {
  return {
    listen(resource, kind, filter) {
      let remove = () => {}
      const stream = eventStream(
        maxQueuedEvents,
        () => socket.close(SLOW_CONSUMER_CLOSE_CODE, `More than ${maxQueuedEvents} events unread`),
        () => remove()
      )
      remove = hubs.of(resource).add({ kind, filter, params, deliver: stream.push })
      return stream.iterator
    }
  }
}

function tooManySubscriptions(maxSubscriptions: number) {
  countRefusal('maxSubscriptions')
  return new GraphQLError(`A connection runs at most ${maxSubscriptions} operations at once.`, {
    extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', maxSubscriptions }
  })
}

/**
 * graphql-ws' hooks: a connection authenticated once, each operation parsed, validated and given a context as
 * over HTTP, every error formatted with its code.
 */
function serverOptions(app: Application, options: WebSocketOptions, hubs: ReturnType<typeof eventHubs>) {
  const { limits } = options
  const connections = new WeakMap<ConnectionContext, Connection & { expiry?: NodeJS.Timeout }>()
  const admission = connectionAdmission(limits, 'GraphQL WebSocket connections')
  // As graphql-http does over HTTP: GraphQL's own rules, then the plugin's. The documents' cache keeps one
  // judgement per document, so both transports must judge with the same rules.
  const rules = [...specifiedRules, ...options.rules]
  const format = (errors: readonly GraphQLError[]) =>
    errors.map((error) => options.formatError(error).toJSON())
  // What a live operation needs of its connection: the params, and a context per computation of its result.
  const operations = new WeakMap<object, { params: ResourceParams; context: () => GraphqlContext }>()
  const server: ServerOptions<ConnectionPayload, Extra & Partial<ConnectionExtra>> = {
    schema: options.schema,
    async onConnect(context) {
      let connection: Connection
      try {
        connection = await connectionOf(app, context)
      } catch {
        return false
      }
      const socket = context.extra.socket
      const refusal = admission.admit(connection.caller)
      if (refusal) {
        socket.close(TOO_MANY_CONNECTIONS_CLOSE_CODE, refusal)
        return false
      }
      const expiry =
        connection.expires === undefined
          ? undefined
          : setTimeout(
              () => socket.close(TOKEN_EXPIRED_CLOSE_CODE, 'The access token expired'),
              Math.max(0, connection.expires - Date.now())
            ).unref()
      connections.set(context, { ...connection, expiry })
      return true
    },
    onClose(context) {
      const connection = connections.get(context)
      if (!connection) return
      connections.delete(context)
      clearTimeout(connection.expiry)
      admission.release(connection.caller)
    },
    async onSubscribe(context, _id, payload) {
      if (Object.keys(context.subscriptions).length > limits.maxSubscriptions) {
        return [tooManySubscriptions(limits.maxSubscriptions)]
      }
      let document: DocumentNode
      try {
        document = options.parse(payload.query)
      } catch (error) {
        if (!(error instanceof GraphQLError)) throw error
        countLimitRefusal(error)
        return [options.formatError(error)]
      }
      const errors = options.validate(options.schema, document, rules)
      if (errors.length) {
        errors.forEach(countLimitRefusal)
        return errors.map(options.formatError)
      }
      const tooDeep = options.checkVariables(payload.variables)
      if (tooDeep) {
        countLimitRefusal(tooDeep)
        return [options.formatError(tooDeep)]
      }
      const params = connections.get(context)?.params ?? {}
      // A subscription spends one of the caller's `subscriptions`, a query or mutation its cost.
      const refused = await spendOnOperation(app, params, document, payload.operationName)
      if (refused) return refused.map(options.formatError)
      const events = eventsOf(hubs, limits.maxQueuedEvents, params, context.extra.socket)
      const contextValue = graphqlContextOf(app, params, limits.maxConcurrentStatements, events)
      operations.set(contextValue, {
        params,
        context: () => graphqlContextOf(app, params, limits.maxConcurrentStatements)
      })
      const { operationName, variables: variableValues } = payload
      return { schema: options.schema, document, operationName, variableValues, contextValue }
    },
    subscribe(args: ExecutionArgs) {
      const operation = operations.get(args.contextValue as object)
      const live = operation && liveOperation(args, { app, ...operation, formatError: options.formatError })
      return live ?? subscribe(args)
    },
    onNext: (_context, _id, _payload, _args, result) =>
      result.errors ? copyWith(result, { errors: format(result.errors) }) : undefined,
    onError: (_context, _id, _payload, errors) => format(errors)
  }
  return server
}

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void

export interface GraphqlWebSocket {
  /** Upgrades the requests to the GraphQL path of `httpServer` (none without one: `app.setup()` alone). */
  attach(httpServer?: Server): void
  /** Closes every connection and stops upgrading. */
  detach(): Promise<void>
  /** How many subscribers each resource has now (for tests of clean-up). */
  subscriberCount: ReturnType<typeof eventHubs>['subscriberCount']
}

/**
 * GraphQL over WebSocket (the graphql-ws protocol) at the GraphQL path of the application's HTTP server:
 * subscriptions, and queries and mutations too, with the same schema, document limits, validation rules,
 * error codes and service calls as over HTTP. At most `maxSubscriptions` operations run at once per
 * connection (more are refused, TOO_MANY_SUBSCRIPTIONS); a subscriber that leaves more than
 * `maxQueuedEvents` events unread loses its connection (close code 4429). Attached to the HTTP server on
 * each `app.setup` (`app.listen`: one WebSocket server per setup, since an application may listen, tear down
 * and listen again), detached on `app.teardown`.
 */
export function serveGraphqlWebSocket(app: Application, options: WebSocketOptions): GraphqlWebSocket {
  const hubs = eventHubs(app)
  const hooks = serverOptions(app, options, hubs)
  let running: { server: { dispose(): unknown }; httpServer?: Server; upgrade: UpgradeListener } | undefined
  return {
    attach(httpServer) {
      // Messages as large as HTTP bodies may be, not ws' 100 MiB: a larger one closes the connection (1009).
      const wss = new WebSocketServer({ noServer: true, maxPayload: options.limits.maxMessageBytes })
      const server = useServer<ConnectionPayload, ConnectionExtra>(hooks, wss)
      const upgrade: UpgradeListener = (request, socket, head) => {
        if (new URL(request.url ?? '/', 'http://localhost').pathname !== options.path) return
        wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request))
      }
      running = { server, httpServer, upgrade }
      httpServer?.on?.('upgrade', upgrade)
    },
    async detach() {
      const stopping = running
      running = undefined
      if (!stopping) return
      stopping.httpServer?.off?.('upgrade', stopping.upgrade)
      // Closes every connection, then the WebSocket server.
      await stopping.server.dispose()
    },
    subscriberCount: hubs.subscriberCount
  }
}
