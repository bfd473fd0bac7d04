import type { Application } from '@feathersjs/koa'
import type { Context as KoaContext } from '../../common/koa'
import type { ResolvedResource } from '../../resource/resolved'
import type { Filter, ResourceQuery } from '../../model/query'
import { resourceService } from '../../service/resource-service'
import type { ResourceParams } from '../../model/records'
import { eventsHandedToBroker } from '../../feathers/broker'
import { ambientTransaction, inAmbientTransaction } from '../../service/transaction'
import { copyWith } from '../../common/copy-with'
import { ConcurrencyLimit } from './concurrency'
import { RelationLoaders } from './loaders'
import { LimitedService, type GraphqlService, type ServiceCaller } from './service-caller'

/**
 * The GraphQL context value: one per HTTP request, so dataloader caches never outlive it. (A type literal,
 * not an interface: graphql-http wants a context assignable to a record.)
 */
export type GraphqlContext = {
  service: ServiceCaller['service']
  params: ServiceCaller['params']
  inTransaction: ServiceCaller['inTransaction']
  loaders: RelationLoaders
  /** Drops what the relation loaders hold, so that reads after a write see it (between a batch's operations). */
  forgetLoads(): void
  /** The events a WebSocket connection may subscribe to; absent over HTTP. */
  events?: SubscriptionSource
}

/** nestjs-query's subscriptions, by what they report. */
export type SubscriptionKind = 'created' | 'updatedOne' | 'updatedMany' | 'deletedOne' | 'deletedMany'

/** Where a subscription's events come from: the resource's events, as this connection may see them. */
export interface SubscriptionSource {
  listen(
    resource: ResolvedResource,
    kind: SubscriptionKind,
    filter: Filter | undefined
  ): AsyncIterableIterator<unknown>
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
  const base: ResourceParams = copyWith(ctx.feathers as object, {
    headers: ctx.request.headers,
    provider: 'graphql',
    groupRefusals: { count: 0 }
  })
  return new RequestContext(app, base, concurrentCalls)
}

/**
 * The context of a GraphQL operation made with `request`'s params (a WebSocket connection's), with the
 * events its subscriptions may hear.
 */
export function graphqlContextOf(
  app: Application,
  request: ResourceParams,
  concurrentCalls: number,
  events?: SubscriptionSource
): GraphqlContext {
  const params = copyWith(request, { provider: 'graphql', groupRefusals: { count: 0 } })
  return new RequestContext(app, params, concurrentCalls, events)
}

/** One operation's context: its params, its resources' services made on first use, its relation loaders. */
class RequestContext implements ServiceCaller {
  loaders: RelationLoaders
  private readonly limited: ConcurrencyLimit
  /** Most operations read one or two resources: a list is found faster than a map is hashed. */
  private readonly services: Array<[ResolvedResource, GraphqlService]> = []

  constructor(
    private readonly app: Application,
    private readonly base: ResourceParams,
    concurrentCalls: number,
    readonly events?: SubscriptionSource
  ) {
    this.limited = new ConcurrencyLimit(concurrentCalls)
    this.loaders = new RelationLoaders(this)
  }

  forgetLoads() {
    this.loaders = new RelationLoaders(this)
  }

  service(resource: ResolvedResource): GraphqlService {
    for (const [known, service] of this.services) if (known === resource) return service
    const service = new LimitedService(resourceService(this.app, resource), this.limited)
    this.services.push([resource, service])
    return service
  }

  params(query: ResourceQuery = {}): ResourceParams {
    return copyWith(this.base, { query, queryModel: true })
  }

  /**
   * Opening the transaction, answers once the writes' events, announced when it commits, are with the broker;
   * joining one, leaves that to whoever opened it.
   */
  async inTransaction<T>(resource: ResolvedResource, work: () => Promise<T>): Promise<T> {
    const knex = resourceService(this.app, resource).Model
    if (ambientTransaction(knex)) return work()
    const result = await inAmbientTransaction(knex, work)
    await eventsHandedToBroker(this.app)
    return result
  }
}
