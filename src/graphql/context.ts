import type { Application } from '@feathersjs/koa'
import type { Context as KoaContext } from '../koa'
import type { ResolvedResource } from '../resource/resolve'
import type { ResourceQuery } from '../query/model'
import { resourceService, type ResourceParams, type ResourceService } from '../service/resource-service'
import { concurrencyLimit } from './concurrency'
import { RelationLoaders } from './loaders'

/** The service methods GraphQL reads through. */
export type GraphqlService = Pick<ResourceService, 'find' | 'get' | 'aggregate'>

/** Calls resource services on behalf of one GraphQL request. */
export interface ServiceCaller {
  service(resource: ResolvedResource): GraphqlService
  /** Params for one service call: the request's params with this call's query. */
  params(query?: ResourceQuery): ResourceParams
}

/**
 * The GraphQL context value: one per HTTP request, so dataloader caches never outlive it. (A type literal,
 * not an interface: graphql-http wants a context assignable to a record.)
 */
export type GraphqlContext = {
  service: ServiceCaller['service']
  params: ServiceCaller['params']
  loaders: RelationLoaders
}

/**
 * The resource's service, each call run through `limited`. A call is one statement, or a page and its
 * count one after the other, so `limited`'s slots bound the connections the calls hold at once.
 */
function limitedService(
  service: ResourceService,
  limited: ReturnType<typeof concurrencyLimit>
): GraphqlService {
  return {
    find: ((params) => limited(() => service.find(params))) as ResourceService['find'],
    get: (id, params) => limited(() => service.get(id, params)),
    aggregate: ((request, params) =>
      limited(() => service.aggregate(request, params))) as ResourceService['aggregate']
  }
}

/**
 * Service calls carry what a REST call would (whatever Feathers' Koa transport and authentication put in
 * `ctx.feathers`, the headers) with provider `graphql`, so guards, authorize and application hooks apply
 * alike. At most `concurrentCalls` of them run at once.
 */
export function createGraphqlContext(
  app: Application,
  ctx: KoaContext,
  concurrentCalls: number
): GraphqlContext {
  const base: ResourceParams = {
    ...(ctx.feathers as object),
    provider: 'graphql',
    headers: ctx.request.headers
  }
  const limited = concurrencyLimit(concurrentCalls)
  const caller: ServiceCaller = {
    service: (resource) => limitedService(resourceService(app, resource), limited),
    params: (query = {}) => ({ ...base, query, queryModel: true })
  }
  return { ...caller, loaders: new RelationLoaders(caller) }
}
