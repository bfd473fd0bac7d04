import Router from '@koa/router'
import { MethodNotAllowed } from '@feathersjs/errors'
import type { Application } from '@feathersjs/koa'
import type { Context, Next } from '../common/koa'
import { badInput, ConfigurationError } from '../common/errors'
import { recordSerializer } from '../resource/codec'
import type { ResolvedResource } from '../resource/resolved'
import { resourceService } from '../service/resource-service'
import type { ResourceRecord } from '../model/records'
import type { Page } from '../model/page'
import { feathersParameterWithoutHeader, speaksFeathers } from '../feathers/query-syntax-header'
import { externalCall } from '../feathers/external-call'
import { collectionQueryParser, listPagingStrategy, listQueryOptions } from './collection-query'
import { restParams } from './params'
import { requireJsonObject } from './request-body'
import { checkQueryString } from './query-string'
import { exportRoute } from './export/route'
import { aggregateRoute } from './aggregate-route'
import { preferredResolution, upsertRoute } from './upsert-route'
import { importRoute } from './import-route'
import { importPath } from './import-body'
import { copyWith } from '../common/copy-with'
import { conditionalRead, resolveCaching, type CachingOptions } from '../feathers/conditional-read'
import { tagRecord, versionedRead } from './record-etag'
import { requestTelemetry } from '../telemetry/request-telemetry'

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

/** The two reads every resource has, as the routes `GET /{basePath}` and `GET /{basePath}/:id` run them. */
export interface ResourceReads {
  list: (ctx: Context, next: Next) => unknown
  /** Reads `ctx.params.id`. */
  get: (ctx: Context, next: Next) => unknown
}

function resourceRoutes(
  router: Router,
  app: Application,
  resource: ResolvedResource,
  feathersRest: boolean,
  appCaching: CachingOptions | undefined
): ResourceReads {
  const service = () => resourceService(app, resource)
  const caching = resolveCaching(appCaching, resource.definition.caching)
  // A read in the spec's dialect answers `If-None-Match` before anything runs (see `conditionalRead`).
  const read = (handle: (ctx: Context) => Promise<void>) => (ctx: Context) =>
    conditionalRead(ctx, caching, () => handle(ctx))
  const serialize = recordSerializer(resource)
  const { definition } = resource
  const base = `/${resource.basePath}`
  const idOf = (ctx: Context) => ctx.params.id
  /**
   * Requests in Feathers' dialect go on to Feathers' REST transport (see `speaksFeathers`) when the app has
   * one; without it every request is read as the spec's, so Feathers parameters are 400s naming them.
   */
  const spec =
    (takesQuery: boolean, handle: (ctx: Context) => Promise<void>) => (ctx: Context, next: Next) => {
      if (feathersRest && speaksFeathers(ctx, takesQuery)) return next()
      if (!takesQuery) rejectQueryParameters(ctx)
      else if (feathersRest) rejectFeathersSyntax(ctx)
      return handle(ctx)
    }

  // Registered before `/:id`, so `export` is never taken for an id.
  if (definition.export?.disabled)
    router.get(`${base}/export`, disabled(`Exporting ${resource.name} records`, 'export'))
  else exportRoute(router, app, resource, caching)
  // And `import`, which only POSTs.
  if (definition.import?.disabled || definition.create?.disabled)
    router.post(
      importPath(resource),
      disabled(`Importing ${resource.name} records`, definition.import?.disabled ? 'import' : 'create')
    )
  else importRoute(router, app, resource)
  // Likewise `aggregate`, where the resource has aggregates; elsewhere it stays an id like any other.
  if (resource.aggregateEnabled) aggregateRoute(router, app, resource, caching)

  const list = spec(true, read(listHandler(resource, service, serialize)))
  router.get(base, list)

  // Feathers' REST transport would take a POST to a record's path for a create; neither dialect means that.
  router.post(`${base}/:id`, async () => {
    throw new MethodNotAllowed(`POST is not allowed on a ${resource.name} record; create with POST ${base}`)
  })

  const get = async (ctx: Context) =>
    (await externalCall(service(), 'get', [idOf(ctx), restParams(ctx)])) as ResourceRecord
  const getOne = spec(
    false,
    resource.version
      ? (ctx) => versionedRead(ctx, resource, caching, () => get(ctx), serialize)
      : read(async (ctx) => {
          ctx.body = serialize(await get(ctx))
        })
  )
  router.get(`${base}/:id`, getOne)

  const create = spec(false, async (ctx) => {
    requireJsonObject(ctx)
    const record = await externalCall(service(), 'create', [
      ctx.request.body as ResourceRecord,
      restParams(ctx)
    ])
    ctx.body = serialize(record as ResourceRecord)
    tagRecord(ctx, resource, record as ResourceRecord)
    ctx.status = 201
  })
  // RFC 7240's Prefer makes a POST an upsert (PostgREST's convention) in either dialect, a list too; a Feathers
  // client's custom method call (X-Service-Method) is left to Feathers.
  router.post(base, (ctx, next) => {
    const resolution = ctx.get('x-service-method') ? undefined : preferredResolution(ctx)
    if (resolution === undefined) return next()
    rejectQueryParameters(ctx)
    return upsertRoute(ctx, resource, service(), resolution, serialize)
  })
  if (definition.create?.disabled) router.post(base, disabled(`Creating ${resource.name} records`, 'create'))
  else router.post(base, create)

  // PUT is `update`: a partial update like PATCH unless the resource sets `update.replace`.
  const change = (method: 'update' | 'patch') =>
    spec(false, async (ctx) => {
      requireJsonObject(ctx)
      const body = ctx.request.body as ResourceRecord
      const record = (await externalCall(service(), method, [
        idOf(ctx),
        body,
        restParams(ctx)
      ])) as ResourceRecord
      ctx.body = serialize(record)
      tagRecord(ctx, resource, record)
    })
  const updateDisabled = definition.update?.disabled
    ? disabled(`Updating ${resource.name} records`, 'update')
    : undefined
  router.put(updatePath(resource), updateDisabled ?? change('update'))
  router.patch(updatePath(resource), updateDisabled ?? change('patch'))

  const remove = spec(false, async (ctx) => {
    ctx.body = serialize(
      (await externalCall(service(), 'remove', [idOf(ctx), restParams(ctx)])) as ResourceRecord
    )
  })
  if (definition.delete?.disabled)
    router.delete(deletePath(resource), disabled(`Deleting ${resource.name} records`, 'delete'))
  else router.delete(deletePath(resource), remove)
  return { list, get: getOne }
}

/** GET at the base path: a page of records `{ pageInfo, nodes, totalCount? }`, or every one as an array. */
function listHandler(
  resource: ResolvedResource,
  service: () => unknown,
  serialize: (record: ResourceRecord) => unknown
) {
  const parseList = collectionQueryParser(resource, listQueryOptions(resource))
  const totalCount = resource.query.enableTotalCount && listPagingStrategy(resource) === 'offset'
  return async (ctx: Context) => {
    const query = copyWith(parseList(ctx.query), { totalCount })
    const result = await externalCall(service(), 'find', [restParams(ctx, query)])
    if (Array.isArray(result)) {
      ctx.body = result.map(serialize)
      return
    }
    const page = result as Page<ResourceRecord>
    ctx.body = {
      pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: page.skip > 0 },
      nodes: page.data.map(serialize),
      ...(page.total === undefined ? {} : { totalCount: page.total }),
      ...(page.totalIsEstimate ? { totalCountIsEstimate: true } : {})
    }
  }
}

/**
 * A disabled endpoint answers 405 before looking at anything the request carries, naming the resource
 * definition's option that disables it.
 */
function disabled(what: string, option: 'export' | 'import' | 'create' | 'update' | 'delete') {
  return async () => {
    throw new MethodNotAllowed(
      `${what} is disabled (${option}: { disabled: true } in its resource definition)`
    )
  }
}

/** The spec's list, asked in Feathers' syntax without the header (see `speaksFeathers`). */
function rejectFeathersSyntax(ctx: Context) {
  const field = feathersParameterWithoutHeader(ctx)
  if (field === undefined) return
  throw badInput([
    {
      field,
      message:
        "is Feathers' query syntax: Feathers clients send X-Query-Syntax: feathers (the feathers-query/client " +
        "services do) for Feathers' answers; this list takes limit, offset and field filters"
    }
  ])
}

/** Single-record endpoints take no query parameters; an unknown parameter is a mistake worth a 400. */
function rejectQueryParameters(ctx: Context) {
  if (!ctx.querystring) return
  const names = Object.keys(ctx.query)
  if (names.length) throw badInput(names.map((field) => ({ field, message: 'is not allowed' })))
}

/**
 * The spec's REST routes of one resource, as Koa routes that call its service. With `feathersRest` they sit in
 * front of Feathers' own REST handler of the service and leave it the requests in Feathers' dialect.
 */
export function restRouter(
  app: Application,
  resource: ResolvedResource,
  feathersRest: boolean,
  caching?: CachingOptions
) {
  const router = new Router()
  router.use(requestTelemetry({ surface: 'rest', route: matchedRoute }) as never)
  // Behind Feathers' REST transport the service's own middleware checks the query string (see the plugin).
  if (!feathersRest) router.use(checkQueryString)
  const reads = resourceRoutes(router, app, resource, feathersRest, caching)
  return { router, reads }
}

/** The template of the route @koa/router matched (`/todo-items/:id`). */
function matchedRoute(ctx: Context) {
  const route = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute
  return typeof route === 'string' ? route : undefined
}

/** What Feathers' REST transport found for the request's path: the service, and the id after its path. */
interface FeathersLookup {
  params?: { __id?: string }
}

/**
 * The resource's routes behind Feathers' REST transport, whose lookup has already found the service and the
 * id: its reads (`GET`, `HEAD` of the list and of a record, the most frequent requests) are answered from the
 * lookup, not routed a second time; every other request goes through `router`.
 */
export function routesBehindFeathers(
  resource: ResolvedResource,
  { router, reads }: ReturnType<typeof restRouter>
) {
  const routes = router.routes() as never as (ctx: Context, next: Next) => unknown
  const base = `/${resource.basePath}`
  const member = `${base}/:id`
  // The words after the base path that the router reads as a route of their own (`export`, `aggregate`), not
  // as a record's id: its other GET paths one segment below the base.
  const named = new Set(
    router.stack
      .filter(({ path, methods }) => methods.includes('GET') && typeof path === 'string' && path !== member)
      .map(({ path }) => String(path).slice(base.length + 1))
      .filter((word) => word !== '' && !word.includes('/'))
  )
  const list = requestTelemetry({ surface: 'rest', route: () => base }, reads.list as never)
  const get = requestTelemetry({ surface: 'rest', route: () => member }, reads.get as never)
  return (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return routes(ctx, next)
    const id = (ctx as Context & { lookup?: FeathersLookup }).lookup?.params?.__id
    if (id === undefined) return list(ctx, next)
    if (named.has(id)) return routes(ctx, next)
    ctx.params = { id: decodedSegment(id) }
    return get(ctx, next)
  }
}

/** A path segment percent-decoded as @koa/router decodes its parameters: as it is when it does not decode. */
function decodedSegment(segment: string) {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
