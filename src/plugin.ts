import { MethodNotAllowed } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import type { Knex } from 'knex'
import type { ResourceDefinition } from './resource/definition'
import { resolveResources } from './resource/resolve'
import { ResourceService, resourceService } from './service/resource-service'
import { resourceHooks } from './service/hooks'
import { transactional } from './service/transaction'
import { reuseStatementsOf } from './service/statement-cache'
import { restRouter } from './rest/router'
import { graphqlMiddleware, type GraphqlOptions } from './graphql/middleware'
import { openApiDocument } from './openapi/document'
import { openApiMiddleware, type OpenApiOptions } from './openapi/middleware'
import type { FeathersQueryState } from './declarations'
import { resolveQueryLimits, type QueryLimits } from './query/limits'
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
  /** What a filter may hold on every surface, and the statements kept per shape (defaults in QueryLimits). */
  limits?: QueryLimits
}

const METHODS = ['find', 'get', 'create', 'patch', 'remove', 'aggregate']

/**
 * `app.configure(feathersQuery({ Model, resources }))` registers one Feathers service per resource at its
 * base path (with the resource in the service options) and mounts the HTTP surfaces that call them.
 * Configure it after the Koa error handler and body parser.
 */
export function feathersQuery(options: FeathersQueryOptions) {
  return (app: Application) => {
    const resources = resolveResources(options.resources)
    const limits = resolveQueryLimits(options.limits)
    reuseStatementsOf(options.Model, limits.preparedStatementBytes)
    const inTransaction = transactional(options.Model)
    for (const resource of resources) {
      const service = new ResourceService(resource, { Model: options.Model, limits })
      app.use(resource.basePath, service, { methods: METHODS, events: [], resource })
      app.service(resource.basePath).hooks({
        around: { create: [inTransaction], patch: [inTransaction], remove: [inTransaction] },
        before: resourceHooks(resource)
      })
    }
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
    const router = restRouter(app, resources)
    app.use(router.routes())
    app.use(router.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }))
  }
}
