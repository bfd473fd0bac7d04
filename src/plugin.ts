import { MethodNotAllowed } from '@feathersjs/errors'
import { getServiceOptions } from '@feathersjs/feathers'
import type { Application } from '@feathersjs/koa'
import type { Knex } from 'knex'
import type { ResourceDefinition } from './resource/definition'
import { resolveResources } from './resource/resolve'
import { type ResolvedResource } from './resource/resolved'
import { ResourceService, resourceService } from './service/resource-service'
import { resourceHooks } from './service/hooks'
import { shareTransaction, transactional } from './service/transaction'
import { waitForLocksAsynchronously } from './dialect/sqlite-locks'
import type { SqliteOptions } from './dialect/better-sqlite3'
import { restRouter } from './rest/router'
import { checkQueryString } from './rest/query-string'
import { graphqlMiddleware, type GraphqlOptions } from './graphql/execution/endpoint'
import { openApiDocument } from './openapi/document'
import { openApiMiddleware, type OpenApiOptions } from './openapi/middleware'
import { externalRecords, WRITE_EVENTS } from './feathers/external-records'
import { checkTransportOrder } from './feathers/transport-order'
import { guardServiceLookup } from './feathers/safe-lookup'
import { answerClientErrors } from './feathers/unreadable-requests'
import type { FeathersQueryState } from './declarations'
import { resolveQueryLimits, type QueryLimits } from './resource/query-limits'
import { keepWrittenRecords } from './service/written-records'
import './declarations'

const methodNotAllowed = () => new MethodNotAllowed('This method is not allowed on this path')

export interface FeathersQueryOptions {
  /** The knex instance every resource table lives in. */
  Model: Knex
  resources: ResourceDefinition[]
  /** The GraphQL endpoint (at `/graphql` unless configured); `false` leaves it out. */
  graphql?: GraphqlOptions | false
  /** The OpenAPI document of the REST surface (at `/openapi.json` unless configured); `false` leaves it out. */
  openapi?: OpenApiOptions | false
  /** SQLite through better-sqlite3: how long a write waits for another process's lock, statement reuse. */
  sqlite?: SqliteOptions
  /** What a filter may hold on every surface, and the statements kept per shape (defaults in QueryLimits). */
  limits?: QueryLimits
}

/** The methods clients may call: the standard ones an endpoint is not disabled for, and `aggregate`. */
function externalMethods(resource: ResolvedResource) {
  const { definition } = resource
  const methods = ['find', 'get', 'aggregate']
  if (!definition.create?.disabled) methods.push('create')
  if (!definition.update?.disabled) methods.push('update', 'patch')
  if (!definition.delete?.disabled) methods.push('remove')
  return methods
}

const EVENTS = Object.values(WRITE_EVENTS)

/**
 * `app.configure(feathersQuery({ Model, resources }))` registers one Feathers service per resource at its
 * base path (with the resource in the service options) and mounts the HTTP surfaces that call them.
 * Configure it where a Feathers CLI app configures its services: after the Koa error handler, the body parser
 * and the transports (`rest()`, `socketio()`); start-up fails with a message when a transport comes later.
 */
export function feathersQuery(options: FeathersQueryOptions) {
  return (app: Application) => {
    const resources = resolveResources(options.resources)
    const limits = resolveQueryLimits(options.limits)
    waitForLocksAsynchronously(options.Model, options.sqlite)
    const transactionHook = transactional(options.Model)
    // Hooks of the plugin's writes that call @feathersjs/knex services on the same knex join the write; what
    // clients get of the resources, and their events, is stripped outside the application's hooks.
    app.hooks({ around: { all: [shareTransaction(options.Model), externalRecords(resources)] } })
    let feathersRest = false
    const byName = new Map(resources.map((resource) => [resource.name, resource]))
    for (const resource of resources) {
      const service = new ResourceService(resource, {
        Model: options.Model,
        limits,
        reuseStatements: options.sqlite?.reuseStatements,
        registered: () => resourceService(app, resource),
        related: (name) => {
          const other = byName.get(name)
          return other && resourceService(app, other)
        }
      })
      // The spec's routes sit in front of Feathers' own REST handler of the service, if the app has one.
      // (Koa's middleware types differ between @koa/router and Feathers' Koa context; both are Koa contexts.)
      const routes = restRouter(app, resource, true).routes() as never
      app.use(resource.basePath, service, {
        methods: externalMethods(resource),
        // The plugin emits these itself, with the records clients may see (see externalRecords).
        events: EVENTS,
        serviceEvents: EVENTS,
        koa: { before: [checkQueryString, routes] },
        resource
      })
      feathersRest ||= getServiceOptions(app.service(resource.basePath)).koa?.composed !== undefined
      app.service(resource.basePath).hooks({
        around: {
          create: [transactionHook, keepWrittenRecords],
          update: [transactionHook, keepWrittenRecords],
          patch: [transactionHook, keepWrittenRecords],
          remove: [transactionHook, keepWrittenRecords]
        },
        before: resourceHooks(resource)
      })
    }
    checkTransportOrder(app)
    guardServiceLookup(app)
    answerClientErrors(app)
    const state: FeathersQueryState = {
      resources,
      serviceOf: (resource) => resourceService(app, resource)
    }
    app.set('feathersQuery', state)
    if (options.graphql !== false) {
      const graphql = graphqlMiddleware(app, resources, options.graphql)
      state.graphqlSchema = graphql.schema
      state.graphqlPath = graphql.path
      app.use(graphql)
    }
    if (options.openapi !== false) {
      state.openApiDocument = openApiDocument(resources, options.openapi)
      app.use(openApiMiddleware(state.openApiDocument, options.openapi?.path))
    }
    // Without Feathers' REST transport the spec's routes are the app's own middleware.
    if (!feathersRest) {
      for (const resource of resources) {
        const router = restRouter(app, resource, false)
        app.use(router.routes())
        app.use(router.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }))
      }
    }
  }
}
