import type { Application } from '@feathersjs/koa'
import type { Context as KoaContext } from 'koa'
import type { ResolvedResource } from '../resource/resolve'
import type { ResourceQuery } from '../query/model'
import { resourceService, type ResourceParams, type ResourceService } from '../service/resource-service'
import { RelationLoaders } from './loaders'

/** Calls resource services on behalf of one GraphQL request. */
export interface ServiceCaller {
  service(resource: ResolvedResource): ResourceService
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
 * Service calls carry what a REST call would (whatever Feathers' Koa transport and authentication put in
 * `ctx.feathers`, the headers) with provider `graphql`, so guards, authorize and application hooks apply alike.
 */
export function createGraphqlContext(app: Application, ctx: KoaContext): GraphqlContext {
  const base: ResourceParams = {
    ...(ctx.feathers as object),
    provider: 'graphql',
    headers: ctx.request.headers
  }
  const caller: ServiceCaller = {
    service: (resource) => resourceService(app, resource),
    params: (query = {}) => ({ ...base, query, queryModel: true })
  }
  return { ...caller, loaders: new RelationLoaders(caller) }
}
