import type { Id, NullableId } from '@feathersjs/feathers'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceQuery } from '../../model/query'
import type {
  AggregatePage,
  AggregateRequest,
  AggregateResponse,
  PartitionedAggregates
} from '../../model/aggregate'
import type { ResourceService } from '../../service/resource-service'
import type { ResourceParams, ResourceRecord } from '../../model/records'
import type { ConcurrencyLimit } from './concurrency'
import { hookedCall } from '../../feathers/external-call'
import { callerAccess, readableResult } from '../../authorization/field-rules'

/** The service methods GraphQL reads and writes through. */
export type GraphqlService = Pick<
  ResourceService,
  'find' | 'get' | 'aggregate' | 'create' | 'patch' | 'remove' | 'upsert'
>

/** Calls resource services on behalf of one GraphQL request. */
export interface ServiceCaller {
  service(resource: ResolvedResource): GraphqlService
  /** Params for one service call: the request's params with this call's query. */
  params(query?: ResourceQuery): ResourceParams
  /** Runs `work` in one transaction that the service calls it makes join (see `inAmbientTransaction`). */
  inTransaction<T>(resource: ResolvedResource, work: () => Promise<T>): Promise<T>
}

/**
 * The resource's service, each read run through `limited`. A read is one statement, or a page and its
 * count, so `limited`'s slots bound the connections the reads hold at once. Writes come from mutations,
 * which run one after the other. (Methods on a prototype: every request makes one of these per resource
 * it reads, and as many closures or bound functions per request cost more than the small reads they wrap.)
 */
export class LimitedService implements GraphqlService {
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

  aggregate(
    request: AggregateRequest & { partitionBy: string },
    params?: ResourceParams
  ): Promise<PartitionedAggregates>
  aggregate(
    request: AggregateRequest & { partitionBy?: undefined; paging: object },
    params?: ResourceParams
  ): Promise<AggregatePage>
  aggregate(
    request: AggregateRequest & { partitionBy?: undefined },
    params?: ResourceParams
  ): Promise<AggregateResponse[]>
  aggregate(
    request: AggregateRequest,
    params?: ResourceParams
  ): Promise<AggregateResponse[] | AggregatePage | PartitionedAggregates>
  aggregate(request: AggregateRequest, params?: ResourceParams) {
    return this.limited.run(() => this.service.aggregate(request, params))
  }

  create(data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  create(data: ResourceRecord[], params?: ResourceParams): Promise<ResourceRecord[]>
  create(
    data: ResourceRecord | ResourceRecord[],
    params?: ResourceParams
  ): Promise<ResourceRecord | ResourceRecord[]> {
    return this.written('create', [data, params ?? {}]) as Promise<ResourceRecord | ResourceRecord[]>
  }

  patch(id: Id, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  patch(id: null, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord[]>
  patch(
    id: NullableId,
    data: ResourceRecord,
    params?: ResourceParams
  ): Promise<ResourceRecord | ResourceRecord[]> {
    return this.written('patch', [id, data, params ?? {}]) as Promise<ResourceRecord | ResourceRecord[]>
  }

  upsert(data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  upsert(data: ResourceRecord[], params?: ResourceParams): Promise<ResourceRecord[]>
  upsert(
    data: ResourceRecord | ResourceRecord[],
    params?: ResourceParams
  ): Promise<ResourceRecord | ResourceRecord[]> {
    return this.written('upsert', [data, params ?? {}]) as Promise<ResourceRecord | ResourceRecord[]>
  }

  remove(id: Id, params?: ResourceParams): Promise<ResourceRecord>
  remove(id: null, params?: ResourceParams): Promise<ResourceRecord[]>
  remove(id: NullableId, params?: ResourceParams): Promise<ResourceRecord | ResourceRecord[]> {
    return this.written('remove', [id, params ?? {}]) as Promise<ResourceRecord | ResourceRecord[]>
  }

  /**
   * A write's answer as its caller may read it. The service answers whole records, which its events carry to
   * every connection; with field rules, the caller's part is cut here, by the params its hooks left.
   */
  private async written(method: 'create' | 'patch' | 'remove' | 'upsert', args: unknown[]): Promise<unknown> {
    const { resource } = this.service
    const service = this.service as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
    if (!resource.definition.fieldRules) return service[method](...args)
    const context = await hookedCall(this.service, method, args)
    return readableResult(context.result, (await callerAccess(resource, context.params))?.of(resource))
  }
}
