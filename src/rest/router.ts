import Router from '@koa/router'
import { MethodNotAllowed } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import type { Context } from 'koa'
import { ConfigurationError } from '../errors'
import { serializeRecord } from '../resource/codec'
import type { ResolvedResource } from '../resource/resolve'
import type { ResourceService, ResourceRecord } from '../service/resource-service'
import type { Page } from '../query/model'
import { collectionQueryParser, listPagingStrategy, listQueryOptions } from './collection-query'
import { restParams } from './params'
import { requireJson } from './request-body'
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
  const service = () => app.service(resource.basePath) as unknown as ResourceService
  const serialize = (record: ResourceRecord) => serializeRecord(resource, record)
  const { definition } = resource
  const base = `/${resource.basePath}`
  const strategy = listPagingStrategy(resource)
  const parseList = collectionQueryParser(resource, listQueryOptions(resource))
  const idOf = (ctx: Context) => ctx.params.id

  // Registered before `/:id`, so `export` is never taken for an id.
  if (!definition.export?.disabled) exportRoute(router, app, resource)

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
    ctx.body = serialize(await service().get(idOf(ctx), restParams(ctx)))
  })

  router.post(base, requireJson, async (ctx) => {
    if (definition.create?.disabled) throw new MethodNotAllowed(`Creating ${resource.name} records is disabled`)
    ctx.body = serialize(await service().create(ctx.request.body as ResourceRecord, restParams(ctx)))
    ctx.status = 201
  })

  const update = async (ctx: Context) => {
    if (definition.update?.disabled) throw new MethodNotAllowed(`Updating ${resource.name} records is disabled`)
    // PUT is a partial update as well: absent properties keep their values.
    ctx.body = serialize(await service().patch(idOf(ctx), ctx.request.body as ResourceRecord, restParams(ctx)))
  }
  router.put(updatePath(resource), requireJson, update)
  router.patch(updatePath(resource), requireJson, update)

  router.delete(deletePath(resource), async (ctx) => {
    if (definition.delete?.disabled) throw new MethodNotAllowed(`Deleting ${resource.name} records is disabled`)
    ctx.body = serialize(await service().remove(idOf(ctx), restParams(ctx)))
  })
}

/** The REST surface of every resource, as Koa routes that call the resource services. */
export function restRouter(app: Application, resources: ResolvedResource[]) {
  const router = new Router()
  for (const resource of resources) resourceRoutes(router, app, resource)
  return router
}
