import { NotAuthenticated } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import { GraphQLError, specifiedRules, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql'
import type { Context } from 'graphql-ws'
import { useServer, type Extra } from 'graphql-ws/use/ws'
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer } from 'ws'
import type { ResolvedResource } from '../../resource/resolved'
import { resourceService } from '../../service/resource-service'
import type { ResourceParams } from '../../model/records'
import { graphqlContextOf, type SubscriptionSource } from '../fields/context'
import { checkDocumentSize } from '../execution/limits'
import { eventStream } from './event-stream'
import { ResourceEvents } from '../fields/resource-events'
import { copyWith } from '../../common/copy-with'

/** Close code of a connection whose client left more than `maxQueuedEvents` events of a subscription unread. */
export const SLOW_CONSUMER_CLOSE_CODE = 4429

export interface WebSocketOptions {
  path: string
  schema: GraphQLSchema
  parse(source: string): DocumentNode
  validate(
    schema: GraphQLSchema,
    document: DocumentNode,
    rules?: readonly ValidationRule[]
  ): readonly GraphQLError[]
  rules: readonly ValidationRule[]
  formatError(error: GraphQLError): GraphQLError
  limits: {
    maxDocumentBytes: number
    maxConcurrentStatements: number
    maxSubscriptions: number
    maxQueuedEvents: number
  }
}

type ConnectionContext = Context<Record<string, unknown> | undefined, Extra & Record<PropertyKey, unknown>>

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
 * authentication service refuses closes the connection (4403 Forbidden).
 */
async function connectionParamsOf(app: Application, context: ConnectionContext): Promise<ResourceParams> {
  const params: ResourceParams = { headers: context.extra.request.headers }
  const accessToken = tokenOf(context.connectionParams)
  if (accessToken === undefined) return params
  const authentication = { strategy: 'jwt', accessToken }
  const service = (app as { defaultAuthentication?: () => unknown }).defaultAuthentication?.() as
    | { authenticate(data: unknown, params: unknown, ...strategies: string[]): Promise<{ user?: unknown }> }
    | undefined
  if (!service) throw new NotAuthenticated('This application has no authentication service')
  const result = await service.authenticate(authentication, { provider: 'graphql' }, 'jwt')
  return copyWith(params, { authentication, user: result.user }) as ResourceParams
}

/**
 * GraphQL over WebSocket (the graphql-ws protocol) at the GraphQL path of the application's HTTP server:
 * subscriptions, and queries and mutations too, with the same schema, document limits, validation rules,
 * error codes and service calls as over HTTP. At most `maxSubscriptions` operations run at once per
 * connection (more are refused, TOO_MANY_SUBSCRIPTIONS); a subscriber that leaves more than
 * `maxQueuedEvents` events unread loses its connection (close code 4429). Started by `app.listen` (Feathers'
 * `setup` with the server), stopped by `app.teardown`.
 */
export function serveGraphqlWebSocket(app: Application, options: WebSocketOptions) {
  const hubs = new Map<ResolvedResource, ResourceEvents>()
  const hubOf = (resource: ResolvedResource) => {
    let hub = hubs.get(resource)
    if (!hub) {
      hub = new ResourceEvents(resource, resourceService(app, resource) as never)
      hubs.set(resource, hub)
    }
    return hub
  }
  const connections = new WeakMap<ConnectionContext, ResourceParams>()
  // As graphql-http does over HTTP: GraphQL's own rules, then the plugin's. The documents' cache keeps one
  // judgement per document, so both transports must judge with the same rules.
  const rules = [...specifiedRules, ...options.rules]

  const eventsOf = (params: ResourceParams, socket: Extra['socket']): SubscriptionSource => ({
    listen(resource, kind, filter) {
      let remove = () => {}
      const stream = eventStream(
        options.limits.maxQueuedEvents,
        () =>
          socket.close(SLOW_CONSUMER_CLOSE_CODE, `More than ${options.limits.maxQueuedEvents} events unread`),
        () => remove()
      )
      remove = hubOf(resource).add({ kind, filter, params, deliver: stream.push })
      return stream.iterator
    }
  })

  const format = (errors: readonly GraphQLError[]) =>
    errors.map((error) => options.formatError(error).toJSON())

  /** One WebSocket server per `setup`: an application may listen, tear down and listen again. */
  const start = () => {
    const wss = new WebSocketServer({ noServer: true })
    const server = useServer<Record<string, unknown> | undefined, Extra & Record<PropertyKey, unknown>>(
      {
        schema: options.schema,
        async onConnect(context) {
          try {
            connections.set(context, await connectionParamsOf(app, context))
            return true
          } catch {
            return false
          }
        },
        onSubscribe(context, _id, payload) {
          if (Object.keys(context.subscriptions).length > options.limits.maxSubscriptions) {
            return [
              new GraphQLError(
                `A connection runs at most ${options.limits.maxSubscriptions} operations at once.`,
                {
                  extensions: {
                    code: 'TOO_MANY_SUBSCRIPTIONS',
                    maxSubscriptions: options.limits.maxSubscriptions
                  }
                }
              )
            ]
          }
          let document: DocumentNode
          try {
            checkDocumentSize(payload.query, options.limits.maxDocumentBytes)
            document = options.parse(payload.query)
          } catch (error) {
            if (error instanceof GraphQLError) return [options.formatError(error)]
            throw error
          }
          const errors = options.validate(options.schema, document, rules)
          if (errors.length) return errors.map(options.formatError)
          const params = connections.get(context) ?? {}
          const contextValue = graphqlContextOf(
            app,
            params,
            options.limits.maxConcurrentStatements,
            eventsOf(params, context.extra.socket)
          )
          return {
            schema: options.schema,
            document,
            operationName: payload.operationName,
            variableValues: payload.variables,
            contextValue
          }
        },
        onNext: (_context, _id, _payload, _args, result) =>
          result.errors ? copyWith(result, { errors: format(result.errors) }) : undefined,
        onError: (_context, _id, _payload, errors) => format(errors)
      },
      wss
    )

    const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (new URL(request.url ?? '/', 'http://localhost').pathname !== options.path) return
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request))
    }
    return { server, upgrade }
  }

  let running: (ReturnType<typeof start> & { httpServer?: Server }) | undefined
  const { setup, teardown } = app
  Object.assign(app, {
    async setup(this: Application, httpServer?: Server, ...rest: unknown[]) {
      running = { ...start(), httpServer }
      httpServer?.on?.('upgrade', running.upgrade)
      return (setup as (...args: unknown[]) => Promise<unknown>).call(this, httpServer, ...rest)
    },
    async teardown(this: Application, httpServer?: Server, ...rest: unknown[]) {
      const stopping = running
      running = undefined
      if (stopping) {
        stopping.httpServer?.off?.('upgrade', stopping.upgrade)
        // Closes every connection, then the WebSocket server.
        await stopping.server.dispose()
      }
      return (teardown as (...args: unknown[]) => Promise<unknown>).call(this, httpServer, ...rest)
    }
  })
  /** How many subscribers each resource has now (for tests of clean-up). */
  return { subscriberCount: (resource: ResolvedResource) => hubs.get(resource)?.size ?? 0 }
}
