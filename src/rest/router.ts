import Router from '@koa/router'
import { MethodNotAllowed } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import type { Context, Next } from 'koa'
import { badInput, ConfigurationError } from '../errors'
import { recordSerializer } from '../resource/codec'
import type { ResolvedResource } from '../resource/resolve'
import { resourceService, type ResourceRecord } from '../service/resource-service'
import type { Page } from '../query/model'
import { collectionQueryParser, listPagingStrategy, listQueryOptions } from './collection-query'
import { restParams } from './params'
import { requireJsonObject } from './request-body'
import { exportRoute } from '../export/route'

/** `:id` unless the endpoint sets its own path, which must still carry the id. */
export function memberPath(resource: ResolvedResource, path: string | undefined, option: string) {
  const relative = (path ?? ':id').replace(/^\/+/, '')
  if (!relative.split('/').includes(':id')) {
    throw new ConfigurationError(`${resource.name}: ${option}.path "${relative}" must contain :id`)
  }
  return `/${resource.basePath}/${relative}`
}

export function updatePath(resource: ResolvedResource) {
  return memberPath(resource, resource.definition.update?.one?.path, 'update.one')
}

export function deletePath(resource: ResolvedResource) {
  return memberPath(resource, resource.definition.delete?.one?.path, 'delete.one')
}

function resourceRoutes(router: Router, app: Application, resource: ResolvedResource) {
  const service = () => resourceService(app, resource)
  const serialize = recordSerializer(resource)
  const { definition } = resource
  const base = `/${resource.basePath}`
  const strategy = listPagingStrategy(resource)
  const parseList = collectionQueryParser(resource, listQueryOptions(resource))
  const idOf = (ctx: Context) => ctx.params.id

  // Registered before `/:id`, so `export` is never taken for an id.
  if (definition.export?.disabled) router.get(`${base}/export`, disabled(`Exporting ${resource.name} records`))
  else exportRoute(router, app, resource)

  router.get(base, async (ctx) => {
    const request = parseList(ctx.query)
    const query = { ...request, totalCount: resource.query.enableTotalCount && strategy === 'offset' }
    const result = await service().find(restParams(ctx, query))
    if (Array.isArray(result)) {
      ctx.body = result.map(serialize)
      return
    }
    const page = result as Page<ResourceRecord>
    ctx.body = {
      pageInfo: page.pageInfo,
      nodes: page.nodes.map(serialize),
      ...(page.totalCount === undefined ? {} : { totalCount: page.totalCount })
    }
  })

  router.get(`${base}/:id`, async (ctx) => {
    rejectQueryParameters(ctx)
    ctx.body = serialize(await service().get(idOf(ctx), restParams(ctx)))
  })

  const create = async (ctx: Context) => {
    rejectQueryParameters(ctx)
    requireJsonObject(ctx)
    ctx.body = serialize(await service().create(ctx.request.body as ResourceRecord, restParams(ctx)))
    ctx.status = 201
  }
  if (definition.create?.disabled) router.post(base, disabled(`Creating ${resource.name} records`))
  else router.post(base, create)

  // PUT is a partial update as well: absent properties keep their values.
  const update = async (ctx: Context) => {
    rejectQueryParameters(ctx)
    requireJsonObject(ctx)
    ctx.body = serialize(await service().patch(idOf(ctx), ctx.request.body as ResourceRecord, restParams(ctx)))
  }
  const updateRoute = definition.update?.disabled
    ? [disabled(`Updating ${resource.name} records`)]
    : [update]
  router.put(updatePath(resource), ...updateRoute)
  router.patch(updatePath(resource), ...updateRoute)

  const remove = async (ctx: Context) => {
    rejectQueryParameters(ctx)
    ctx.body = serialize(await service().remove(idOf(ctx), restParams(ctx)))
  }
  if (definition.delete?.disabled) router.delete(deletePath(resource), disabled(`Deleting ${resource.name} records`))
  else router.delete(deletePath(resource), remove)
}

/** A disabled endpoint answers 405 before looking at anything the request carries. */
function disabled(what: string) {
  return async () => {
    throw new MethodNotAllowed(`${what} is disabled`)
  }
}

/** Single-record endpoints take no query parameters; an unknown parameter is a mistake worth a 400. */
function rejectQueryParameters(ctx: Context) {
  if (!ctx.querystring) return
  const names = Object.keys(ctx.query)
  if (names.length) throw badInput(names.map((field) => ({ field, message: 'is not allowed' })))
}

/** The REST surface of every resource, as Koa routes that call the resource services. */
export function restRouter(app: Application, resources: ResolvedResource[]) {
  const router = new Router()
  for (const resource of resources) resourceRoutes(router, app, resource)
  return router
}
