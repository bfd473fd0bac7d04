import { MethodNotAllowed } from '@feathersjs/errors'
import { getServiceOptions } from '@feathersjs/feathers'
import type { Application } from '@feathersjs/koa'
import type { Context, Next } from '../common/koa'
import type { ResolvedResource } from '../resource/resolved'
import { restRouter, routesBehindFeathers } from '../rest/router'
import { graphqlMiddleware } from '../graphql/execution/endpoint'
import { openApiDocument } from '../openapi/document'
import { openApiMiddleware } from '../openapi/middleware'
import type { OpenApiDocument } from '../openapi/types'
import type { SurfaceOptions } from './app-wide-options'
import type { Knex } from 'knex'
import { healthMiddleware } from '../operations/readiness'

type Middleware = (ctx: Context, next: Next) => unknown

const methodNotAllowed = () => new MethodNotAllowed('This method is not allowed on this path')

export interface Surfaces {
  /** The GraphQL endpoint, the OpenAPI document and (without Feathers' REST transport) the spec's routes. */
  middleware: Middleware
  /** The spec's routes of a resource, in front of Feathers' REST handler of its service. */
  routesOf(resource: ResolvedResource): Middleware
  graphql?: ReturnType<typeof graphqlMiddleware>
  openApiDocument?: OpenApiDocument
}

/** Runs middleware one after the other, as Koa does, then `next`. */
function chain(middleware: Middleware[]): Middleware {
  return (ctx, next) => {
    const run = (index: number): unknown =>
      index === middleware.length ? next() : middleware[index](ctx, () => run(index + 1) as Promise<void>)
    return run(0)
  }
}

/**
 * What the application serves of every registered resource, built once they are all registered; the health
 * routes check `databases`, the knex instances the resources use.
 */
export function buildSurfaces(
  app: Application,
  resources: ResolvedResource[],
  options: SurfaceOptions,
  databases: Knex[]
): Surfaces {
  const shared: Middleware[] = []
  const surfaces: Surfaces = { middleware: chain(shared), routesOf: () => (_ctx, next) => next() }
  if (options.health) {
    shared.push(healthMiddleware(options.health === true ? {} : options.health, databases))
  }
  if (options.graphql !== false) {
    surfaces.graphql = graphqlMiddleware(app, resources, options.graphql, options.caching)
    shared.push(surfaces.graphql)
  }
  if (options.openapi !== false) {
    surfaces.openApiDocument = openApiDocument(resources, options.openapi)
    shared.push(openApiMiddleware(surfaces.openApiDocument, options.openapi?.path))
  }
  const feathersRest = resources.some(
    (resource) => getServiceOptions(app.service(resource.basePath))?.koa?.composed !== undefined
  )
  if (feathersRest) {
    // (Koa's middleware types differ between @koa/router and Feathers' Koa context; both are Koa contexts.)
    const routes = new Map(
      resources.map((resource) => [
        resource,
        routesBehindFeathers(resource, restRouter(app, resource, true, options.caching)) as Middleware
      ])
    )
    surfaces.routesOf = (resource) => routes.get(resource)!
  } else {
    // Without Feathers' REST transport the spec's routes are the application's own middleware.
    for (const resource of resources) {
      const { router } = restRouter(app, resource, false, options.caching)
      shared.push(
        router.routes() as never,
        router.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }) as never
      )
    }
  }
  return surfaces
}
