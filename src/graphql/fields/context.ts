import type { Id, NullableId } from '@feathersjs/feathers'
import type { Application } from '@feathersjs/koa'
import type { Context as KoaContext } from '../../common/koa'
import type { ResolvedResource } from '../../resource/resolved'
import type { Filter, ResourceQuery } from '../../model/query'
import type { AggregatePage, AggregateRequest, AggregateResponse, PartitionedAggregates } from '../../model/aggregate'
import type { SubscriptionKind } from './resource-events'
import { resourceService, type ResourceService } from '../../service/resource-service'
import type { ResourceParams, ResourceRecord } from '../../model/records'
import { eventsHandedToBroker } from '../../feathers/broker'
import { ambientTransaction, inAmbientTransaction } from '../../service/transaction'
import { ConcurrencyLimit } from './concurrency'
import { RelationLoaders } from './loaders'
import { copyWith } from '../../common/copy-with'

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
 * The resource's service, each read run through `limited`. A read is one statement, or a page and its
 * count, so `limited`'s slots bound the connections the reads hold at once. Writes come from mutations,
 * which run one after the other. (Methods on a prototype: every request makes one of these per resource
 * it reads, and as many closures or bound functions per request cost more than the small reads they wrap.)
 */
class LimitedService implements GraphqlService {
  constructor(
    private readonly service: ResourceService,
    private readonly limited: ConcurrencyLimit
  ) {}

  find(params?: ResourceParams) {
    return this.limited.run(() => this.service.find(params))
  }

  get(id: Id, params?: ResourceParams) {
    return this.limited.run(() => this.service.get(id, params))
  }

  aggregate(request: AggregateRequest & { partitionBy: string }, params?: ResourceParams): Promise<PartitionedAggregates>
  aggregate(
    request: AggregateRequest & { partitionBy?: undefined; paging: object },
    params?: ResourceParams
  ): Promise<AggregatePage>
  aggregate(request: AggregateRequest & { partitionBy?: undefined }, params?: ResourceParams): Promise<AggregateResponse[]>
  aggregate(
    request: AggregateRequest,
    params?: ResourceParams
  ): Promise<AggregateResponse[] | AggregatePage | PartitionedAggregates>
  aggregate(request: AggregateRequest, params?: ResourceParams) {
    return this.limited.run(() => this.service.aggregate(request, params))
  }

  create(data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  create(data: ResourceRecord[], params?: ResourceParams): Promise<ResourceRecord[]>
  create(data: ResourceRecord | ResourceRecord[], params?: ResourceParams): Promise<ResourceRecord | ResourceRecord[]> {
    return Array.isArray(data) ? this.service.create(data, params) : this.service.create(data, params)
  }

  patch(id: Id, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  patch(id: null, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord[]>
  patch(id: NullableId, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord | ResourceRecord[]> {
    return id === null ? this.service.patch(id, data, params) : this.service.patch(id, data, params)
  }

  remove(id: Id, params?: ResourceParams): Promise<ResourceRecord>
  remove(id: null, params?: ResourceParams): Promise<ResourceRecord[]>
  remove(id: NullableId, params?: ResourceParams): Promise<ResourceRecord | ResourceRecord[]> {
    return id === null ? this.service.remove(id, params) : this.service.remove(id, params)
  }
}

/**
 * Service calls carry what a REST call would (whatever Feathers' Koa transport and authentication put in
 * `ctx.feathers`, the headers) with provider `graphql`, so guards, authorize and application hooks apply
 * alike. At most `concurrentCalls` of them run at once.
 */
export function createGraphqlContext(app: Application, ctx: KoaContext, concurrentCalls: number): GraphqlContext {
  const base: ResourceParams = copyWith(ctx.feathers as object, { headers: ctx.request.headers, provider: 'graphql' })
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
  return new RequestContext(app, copyWith(request, { provider: 'graphql' }), concurrentCalls, events)
}

/** One operation's context: its params, its resources' services made on first use, its relation loaders. */
class RequestContext implements ServiceCaller {
  readonly loaders: RelationLoaders
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
