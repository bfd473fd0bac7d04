import type { Application } from '@feathersjs/koa'
import type { Context as KoaContext } from '../koa'
import type { ResolvedResource } from '../resource/resolve'
import type { Filter, ResourceQuery } from '../query/model'
import type { SubscriptionKind } from './subscriptions/resource-events'
import { resourceService, type ResourceParams, type ResourceService } from '../service/resource-service'
import { inAmbientTransaction } from '../service/transaction'
import { concurrencyLimit } from './concurrency'
import { RelationLoaders } from './loaders'

/** The service methods GraphQL reads and writes through. */
export type GraphqlService = Pick<ResourceService, 'find' | 'get' | 'aggregate' | 'create' | 'patch' | 'remove'>

/** Calls resource services on behalf of one GraphQL request. */
export interface ServiceCaller {
  service(resource: ResolvedResource): GraphqlService
  /** Params for one service call: the request's params with this call's query. */
  params(query?: ResourceQuery): ResourceParams
  /** Runs `work` in one transaction that the service calls it makes join (see `inAmbientTransaction`). */
  inTransaction<T>(resource: ResolvedResource, work: () => Promise<T>): Promise<T>
}

/**
 * The GraphQL context value: one per HTTP request, so dataloader caches never outlive it. (A type literal,
 * not an interface: graphql-http wants a context assignable to a record.)
 */
export type GraphqlContext = {
  service: ServiceCaller['service']
  params: ServiceCaller['params']
  inTransaction: ServiceCaller['inTransaction']
  loaders: RelationLoaders
  /** The events a WebSocket connection may subscribe to; absent over HTTP. */
  events?: SubscriptionSource
}

/** Where a subscription's events come from: the resource's events, as this connection may see them. */
export interface SubscriptionSource {
  listen(resource: ResolvedResource, kind: SubscriptionKind, filter: Filter | undefined): AsyncIterableIterator<unknown>
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
      limited(() => service.aggregate(request, params))) as ResourceService['aggregate'],
    // Writes come from mutations, which run one after the other.
    create: service.create.bind(service) as ResourceService['create'],
    patch: service.patch.bind(service) as ResourceService['patch'],
    remove: service.remove.bind(service) as ResourceService['remove']
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
  return graphqlContextOf(app, { ...(ctx.feathers as object), headers: ctx.request.headers }, concurrentCalls)
}

/** The context of a GraphQL operation made with `request`'s params (HTTP request or WebSocket connection). */
export function graphqlContextOf(app: Application, request: ResourceParams, concurrentCalls: number): GraphqlContext {
  const base: ResourceParams = { ...request, provider: 'graphql' }
  const limited = concurrencyLimit(concurrentCalls)
  const caller: ServiceCaller = {
    service: (resource) => limitedService(resourceService(app, resource), limited),
    params: (query = {}) => ({ ...base, query, queryModel: true }),
    inTransaction: (resource, work) => inAmbientTransaction(resourceService(app, resource).Model, work)
  }
  return { ...caller, loaders: new RelationLoaders(caller) }
}
