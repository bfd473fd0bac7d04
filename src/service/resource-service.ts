import { MethodNotAllowed } from '@feathersjs/errors'
import type { Id, NullableId, Paginated, Query } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { encodeRow } from '../resource/codec'
import { resolveQueryLimits, type QueryLimits } from '../resource/query-limits'
import { writableFields } from '../resource/input-schemas'
import type { ResolvedResource } from '../resource/resolved'
import type { Filter } from '../model/query'
import type {
  AggregatePage,
  AggregateRequest,
  AggregateResponse,
  PartitionedAggregates
} from '../model/aggregate'
import type { Page, PartitionedPages } from '../model/page'
import type { ResourceParams, ResourceRecord } from '../model/records'
import { FeathersQueryParser, type FeathersRequest } from '../query/feathers-syntax'
import { projection } from '../query/projection'
import { callScope, type ScopeCall } from '../authorization/call-scope'
import { readScope } from '../authorization/read-scope'
import { aggregateRecords, readGroupIndexes } from './aggregate'
import { feathersPageSizes, findFeathersPage, type FeathersPageSizes } from './feathers-find'
import { findRecords } from './find'
import { multiLimit } from './multi'
import { ResourceStore } from './store'
import { changeRecord, changeRecords, insertRecords, notFound, removeRecords } from './writes'

export interface ResourceServiceOptions {
  Model: Knex
  /** The registered (hook-running) service, whose hook contexts `authorize` gets. */
  registered: () => unknown
  /** What one filter may hold, and the statements kept per shape (QueryLimits has the defaults). */
  limits?: QueryLimits
  /** On better-sqlite3, run compiled reads on statements prepared once per connection (default true). */
  reuseStatements?: boolean
  /**
   * The registered service of another resource, by name: relation filters and many-to-many reads ask it what
   * the caller may read of its records (`readScope`).
   */
  related?: (name: string) => ResourceService | undefined
}

/**
 * A Feathers service over one resource's table. Each method scopes the call (`authorize`, `defaultFilter`),
 * reads its query (the query model on the plugin's routes, Feathers' query syntax from every other caller)
 * and hands it to the resource's store, which builds and runs the statements.
 */
export class ResourceService {
  readonly resource: ResolvedResource
  readonly Model: Knex
  private readonly store: ResourceStore
  /** The call's params with its scope (authorize, defaultFilter), worked out when the method runs. */
  private readonly scoped: (call: ScopeCall) => ResourceParams | Promise<ResourceParams>
  private readonly scopeOfReads: (caller: ResourceParams) => Promise<Filter | undefined>
  private readonly feathersQuery: FeathersQueryParser
  /** Feathers callers' page sizes: the resource's REST default and maximum. */
  private readonly paginate: FeathersPageSizes

  constructor(resource: ResolvedResource, options: ResourceServiceOptions) {
    this.resource = resource
    this.Model = options.Model
    this.scoped = callScope(resource, options.registered)
    this.scopeOfReads = readScope(resource, options.registered, this.scoped)
    this.store = new ResourceStore(resource, {
      Model: options.Model,
      limits: resolveQueryLimits(options.limits),
      reuseStatements: options.reuseStatements,
      related: (name) => (name === resource.name ? this : options.related?.(name))
    })
    this.feathersQuery = new FeathersQueryParser(resource)
    this.paginate = feathersPageSizes(resource)
  }

  /**
   * What a `find` by this caller may read of the resource (its read guards, `authorize` and `defaultFilter`):
   * relation filters and many-to-many reads of other resources apply it to this resource's records.
   */
  readScope(caller: ResourceParams): Promise<Filter | undefined> {
    return this.scopeOfReads(caller)
  }

  /** better-sqlite3 runs each statement on the event loop: while it reads, the server answers nobody. */
  get readsSynchronously() {
    return this.store.readsSynchronously
  }

  /** Feathers calls it once the app is set up. */
  async setup() {
    await readGroupIndexes(this.store)
  }

  /**
   * On the plugin's routes (`params.queryModel`): a `Page`, every record as an array without paging, one page
   * per partition with `partitionBy`. For every other caller: Feathers' `{ total, limit, skip, data }`, or an
   * array with `paginate: false`.
   */
  async find(
    params?: ResourceParams
  ): Promise<
    Page<ResourceRecord> | ResourceRecord[] | PartitionedPages<ResourceRecord> | Paginated<ResourceRecord>
  >
  async find(params: ResourceParams = {}): Promise<unknown> {
    const scoped = await this.scoped({ method: 'find', params })
    if (scoped.queryModel) return findRecords(this.store, scoped)
    return findFeathersPage(this.store, scoped, this.feathersRequest(scoped, true), this.paginate)
  }

  async get(id: Id, params: ResourceParams = {}): Promise<ResourceRecord> {
    const scoped = await this.scoped({ method: 'get', params, id })
    const { filter, select } = this.readQuery(scoped)
    const record = await this.store.getRecord(id, scoped, filter, projection(this.resource, select))
    if (!record) throw notFound(this.store, id)
    return record
  }

  /**
   * count/countDistinct/sum/avg/min/max of the records visible to the call (scope, `query.filter`, soft
   * delete), grouped by `request.groupBy`, filtered by `having`, ordered and paged, in one statement; with
   * `partitionBy`, for many parents at once. With `paging` the result is a page of groups.
   */
  async aggregate(
    request: AggregateRequest & { partitionBy: string },
    params?: ResourceParams
  ): Promise<PartitionedAggregates>
  async aggregate(
    request: AggregateRequest & { partitionBy?: undefined; paging: object },
    params?: ResourceParams
  ): Promise<AggregatePage>
  async aggregate(
    request: AggregateRequest & { partitionBy?: undefined },
    params?: ResourceParams
  ): Promise<AggregateResponse[]>
  async aggregate(
    request: AggregateRequest,
    params?: ResourceParams
  ): Promise<AggregateResponse[] | AggregatePage | PartitionedAggregates>
  async aggregate(request: AggregateRequest, params: ResourceParams = {}): Promise<unknown> {
    // Partitions are the plugin's relation aggregates, keyed by any stored field (a hidden foreign key too):
    // a client's own call cannot ask for them, or it would read that field's values.
    if (params.provider && !params.queryModel && request?.partitionBy !== undefined) {
      throw badField('partitionBy', 'is not part of an aggregate request')
    }
    const scoped = await this.scoped({ method: 'aggregate', params })
    const { filter } = this.readQuery(scoped, true)
    const through = scoped.queryModel ? scoped.query?.through : undefined
    const link = through ? await this.store.link(scoped, through) : undefined
    return aggregateRecords(this.store, request, scoped, filter, link)
  }

  async create(data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  async create(data: ResourceRecord[], params?: ResourceParams): Promise<ResourceRecord[]>
  async create(data: ResourceRecord | ResourceRecord[], params: ResourceParams = {}): Promise<unknown> {
    if (Array.isArray(data)) multiLimit(this.resource, 'create', data.length)
    const scoped = await this.scoped({ method: 'create', params, data })
    // The selection and every record are checked (encoded) before anything is written.
    const fields = projection(this.resource, this.readQuery(scoped).select)
    const rows = (Array.isArray(data) ? data : [data]).map((record) => encodeRow(this.resource, record))
    const created = await insertRecords(this.store, scoped, rows, fields)
    return Array.isArray(data) ? created : created[0]
  }

  /**
   * With `update.replace` set, `update` replaces the record: every field a client may write and the body leaves
   * out becomes null (the body was validated against the create schema, so defaults are filled in). Otherwise
   * `update` is a partial update like `patch`, which is what the spec's PUT route is.
   */
  async update(id: NullableId, data: ResourceRecord, params: ResourceParams = {}): Promise<ResourceRecord> {
    if (id === null)
      throw new MethodNotAllowed(`${this.resource.name}: update replaces one record; use patch for several`)
    const row = this.resource.definition.update?.replace ? this.replacement(data) : data
    return this.changeOne('update', id, row, params)
  }

  private replacement(data: ResourceRecord): ResourceRecord {
    const full: ResourceRecord = {}
    for (const field of writableFields(this.resource)) full[field.name] = null
    return Object.assign(full, data)
  }

  async patch(id: Id, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  async patch(id: null, data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord[]>
  async patch(id: NullableId, data: ResourceRecord, params: ResourceParams = {}): Promise<unknown> {
    if (id !== null) return this.changeOne('patch', id, data, params)
    const max = multiLimit(this.resource, 'patch')
    const scoped = await this.scoped({ method: 'patch', params, id: null, data })
    const { filter, select } = this.readQuery(scoped, true)
    const fields = projection(this.resource, select)
    return changeRecords(this.store, scoped, this.encodeChange(data), filter, fields, max)
  }

  private async changeOne(method: string, id: Id, data: ResourceRecord, params: ResourceParams) {
    const scoped = await this.scoped({ method, params, id, data })
    const { filter, select } = this.readQuery(scoped)
    const fields = projection(this.resource, select)
    return changeRecord(this.store, scoped, id, this.encodeChange(data), filter, fields)
  }

  /** The columns a change writes: never the id. */
  private encodeChange(data: ResourceRecord) {
    const row = encodeRow(this.resource, data)
    delete row[this.resource.idField.column]
    return row
  }

  async remove(id: Id, params?: ResourceParams): Promise<ResourceRecord>
  async remove(id: null, params?: ResourceParams): Promise<ResourceRecord[]>
  async remove(id: NullableId, params: ResourceParams = {}): Promise<unknown> {
    const max = id === null ? multiLimit(this.resource, 'remove') : 1
    const scoped = await this.scoped({ method: 'remove', params, id })
    const { filter, select } = this.readQuery(scoped, id === null)
    return removeRecords(this.store, scoped, id, filter, projection(this.resource, select), max)
  }

  /** The filter and selection of a call, from the query model or from Feathers' query syntax. */
  private readQuery(params: ResourceParams, collection = false): { filter?: Filter; select?: string[] } {
    if (params.queryModel) return { filter: params.query?.filter, select: params.query?.select }
    const { filter, select } = this.feathersRequest(params, collection)
    return { filter, select }
  }

  /** A Feathers caller's query, checked and translated; `collection` for find, which alone pages and sorts. */
  private feathersRequest(params: ResourceParams, collection: boolean): FeathersRequest {
    return this.feathersQuery.parse(params.query as Query | undefined, {
      collection,
      external: !!params.provider
    })
  }
}

/**
 * The registered (hook-running) service of a resource. Feathers types `app.service` for its own service
 * shapes, so the one cast lives here.
 */
export function resourceService(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app: { service(path: string): any },
  resource: ResolvedResource
): ResourceService {
  return app.service(resource.basePath) as ResourceService
}
