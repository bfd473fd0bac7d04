import { MethodNotAllowed } from '@feathersjs/errors'
import type { Id, NullableId, Paginated, PaginationOptions, Query } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { encodeRow } from '../resource/codec'
import { resolveQueryLimits, type QueryLimits } from '../resource/query-limits'
import { createDefaultsOf, writableFields } from '../resource/input-schemas'
import type { ResolvedResource } from '../resource/resolved'
import type { ResourceDefinition } from '../resource/definition'
import type {
  AggregateRequestOf,
  DataOf,
  FeathersParams,
  FilterQueryOf,
  FindAnswer,
  FindResult,
  ParamsOf,
  PatchOf,
  QueryOf,
  RecordOf,
  RecordQueryOf,
  WriteQueryOf
} from '../resource/typed-records'
import type { Filter, ResourceQuery } from '../model/query'
import type {
  AggregateHaving,
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
import { callerOf, readScope } from '../authorization/read-scope'
import {
  callerAccess,
  readableResult,
  readableSelection,
  type CallerAccess
} from '../authorization/field-rules'
import { fieldUseCheck } from '../authorization/field-use'
import { aggregateRecords, readGroupIndexes } from './aggregate'
import { feathersPageSizes, findFeathersPage, type FeathersPageSizes } from './feathers-find'
import { findRecords } from './find'
import { multiLimit, type MultiOption } from './multi'
import { notFound, ResourceStore } from './store'
import { changeRecord, changeRecords, insertRecords, removeRecords } from './writes'
import { upsertRecords, type UpsertWrite } from './upsert'
import { isVersionOf, preconditionOf, readPrecondition, staleRecord, withVersion } from './record-version'

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
  /** The application's write generation, undefined while counts are not reused (see `CountCache`). */
  writeGeneration?: () => number | undefined
  /** What `import` does (see `import/import-call.ts`), given by the registration. */
  importer?: (data: unknown, params: ResourceParams) => Promise<unknown>
}

/**
 * The options a Feathers database adapter has, under the names Feathers users and tools read and set:
 * `paginate` and `multi` may be changed at run time, as theirs may (`service.options.multi = ['remove']`).
 */
export interface FeathersServiceOptions {
  /** The id field's name. */
  id: string
  Model: Knex
  /**
   * Page sizes of Feathers callers' find: the resource's (or the application's paginate); `false` answers
   * every matching record as an array, as an adapter without `paginate` does.
   */
  paginate: FeathersPageSizes | false
  /** Which methods may change several records at once: the resource's `multi`. */
  multi: MultiOption
  /** Custom events of the service. */
  events: string[]
}

/**
 * A Feathers service over one resource's table. Each method scopes the call (`authorize`, `defaultFilter`),
 * reads its query (the query model on the plugin's routes, Feathers' query syntax from every other caller)
 * and hands it to the resource's store, which builds and runs the statements.
 */
export class ResourceService<D extends ResourceDefinition = ResourceDefinition> {
  readonly resource: ResolvedResource
  readonly Model: Knex
  /** The id field's name, as Feathers' adapters expose it. */
  readonly id: string
  readonly options: FeathersServiceOptions
  /** Custom events (Feathers reads them from here when the service is registered). */
  readonly events: string[]
  private readonly store: ResourceStore
  /** The call's params with its scope (authorize, defaultFilter), worked out when the method runs. */
  private readonly scoped: (call: ScopeCall) => ResourceParams | Promise<ResourceParams>
  private readonly scopeOfReads: (caller: ResourceParams) => Promise<Filter | undefined>
  private readonly feathersQuery: FeathersQueryParser
  private readonly importer?: ResourceServiceOptions['importer']

  constructor(resource: ResolvedResource, options: ResourceServiceOptions) {
    this.resource = resource
    this.Model = options.Model
    this.scoped = callScope(resource, options.registered)
    this.scopeOfReads = readScope(resource, options.registered, this.scoped)
    this.store = new ResourceStore(resource, {
      Model: options.Model,
      limits: resolveQueryLimits(options.limits),
      reuseStatements: options.reuseStatements,
      related: (name) => (name === resource.name ? this : options.related?.(name)),
      writeGeneration: options.writeGeneration
    })
    this.feathersQuery = new FeathersQueryParser(resource)
    this.importer = options.importer
    this.id = resource.idField.name
    this.events = [...(resource.definition.events ?? [])]
    this.options = {
      id: this.id,
      Model: options.Model,
      paginate: feathersPageSizes(resource),
      multi: resource.definition.multi ?? false,
      events: this.events
    }
  }

  /** The service options of a call: `params.adapter` (set by server code only) over the service's. */
  private optionsOf(params: ResourceParams): FeathersServiceOptions {
    return params.adapter ? { ...this.options, ...params.adapter } : this.options
  }

  /**
   * What a `find` by this caller may read of the resource (its read guards, `authorize` and `defaultFilter`):
   * relation filters and many-to-many reads of other resources apply it to this resource's records.
   */
  readScope(caller: ResourceParams): Promise<Filter | undefined> {
    return this.scopeOfReads(caller)
  }

  /**
   * Of the records `filter` reaches (soft-deleted ones aside), how many there are and how many this caller
   * may remove, as `authorize` rules a remove (no `defaultFilter`): what a cascade from a parent would take.
   */
  async removableReach(caller: ResourceParams, filter: Filter): Promise<{ all: number; removable: number }> {
    const unscoped = { transaction: caller.transaction }
    const all = await this.store.count(unscoped, await this.store.visible(unscoped, filter))
    if (all === 0) return { all, removable: 0 }
    const params = { ...callerOf(caller), lookup: true }
    const scoped = await this.scoped({ method: 'remove', params, id: null })
    return { all, removable: await this.store.count(scoped, await this.store.visible(scoped, filter)) }
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
    params: ResourceParams & { queryModel: true }
  ): Promise<FindAnswer<D, Page<RecordOf<D>> | RecordOf<D>[] | PartitionedPages<RecordOf<D>>>>
  async find(params: FeathersParams<QueryOf<D>> & { paginate: false }): Promise<FindAnswer<D, RecordOf<D>[]>>
  async find(
    params?: FeathersParams<QueryOf<D>> & { paginate?: PaginationOptions }
  ): Promise<FindAnswer<D, Paginated<RecordOf<D>>>>
  async find(params?: ParamsOf<QueryOf<D>>): Promise<FindResult<RecordOf<D>>>
  // `ParamsOf<Query>`: the typed overloads' Feathers-syntax params must fit the implementation's.
  async find(params: ParamsOf<Query> = {}): Promise<unknown> {
    const scoped = await this.scoped({ method: 'find', params })
    const access = await callerAccess(this.resource, params)
    const readable = access?.of(this.resource)
    if (scoped.queryModel) {
      this.checkFieldUse(access, scoped.query, MODEL_PATHS)
      const query = readable && { ...scoped.query, select: readableSelection(scoped.query?.select, readable) }
      return readableResult(await findRecords(this.store, query ? { ...scoped, query } : scoped), readable)
    }
    const request = this.feathersRequest(scoped, true)
    this.checkFieldUse(access, request, FEATHERS_PATHS)
    if (readable) request.select = readableSelection(request.select, readable)
    const page = await findFeathersPage(this.store, scoped, request, this.optionsOf(scoped).paginate)
    return readableResult(page, readable)
  }

  /** Refuses, in one 400, every use the call's query makes of a field its caller's rules take away. */
  private checkFieldUse(
    access: CallerAccess | undefined,
    query: ResourceQuery | undefined,
    paths: typeof MODEL_PATHS
  ) {
    fieldUseCheck(access, this.resource)?.query(query, paths).done()
  }

  /** Feathers' hook-less methods, as its database adapters have them: the same work without any hook. */
  _find(params?: ResourceParams) {
    return unhooked('find').call(this, params)
  }

  _get(id: Id, params?: ResourceParams) {
    return unhooked('get').call(this, id, params)
  }

  _create(data: ResourceRecord | ResourceRecord[], params?: ResourceParams) {
    return unhooked('create').call(this, data, params)
  }

  _update(id: NullableId, data: ResourceRecord, params?: ResourceParams) {
    return unhooked('update').call(this, id, data, params)
  }

  _patch(id: NullableId, data: ResourceRecord, params?: ResourceParams) {
    return unhooked('patch').call(this, id, data, params)
  }

  _remove(id: NullableId, params?: ResourceParams) {
    return unhooked('remove').call(this, id, params)
  }

  async get(id: Id, params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>>
  async get(id: Id, params: ResourceParams = {}): Promise<unknown> {
    const scoped = await this.scoped({ method: 'get', params, id })
    const { filter, select } = this.readQuery(scoped, false, true)
    const access = await callerAccess(this.resource, params)
    this.checkFieldUse(access, { filter, select }, this.pathsOf(scoped))
    const versions = readPrecondition(this.resource, scoped)
    const readable = access?.of(this.resource)
    const required = versions ? [this.resource.version!.field] : []
    const fields = projection(this.resource, readableSelection(select, readable), required)
    const record = await this.store.getRecord(id, scoped, filter, fields)
    if (!record) throw notFound(this.store, id)
    if (versions && !isVersionOf(this.resource, record, versions)) throw staleRecord(this.resource, id)
    return readableResult(record, readable)
  }

  /**
   * count/countDistinct/sum/avg/min/max of the records visible to the call (scope, `query.filter`, soft
   * delete), grouped by `request.groupBy`, filtered by `having`, ordered and paged, in one statement; with
   * `partitionBy`, for many parents at once. With `paging` the result is a page of groups.
   */
  async aggregate(
    request: AggregateRequestOf<D, AggregateHaving> & { partitionBy: string },
    params?: ParamsOf<FilterQueryOf<D>>
  ): Promise<PartitionedAggregates>
  async aggregate(
    request: AggregateRequestOf<D, AggregateHaving> & { partitionBy?: undefined; paging: object },
    params?: ParamsOf<FilterQueryOf<D>>
  ): Promise<AggregatePage>
  async aggregate(
    request: AggregateRequestOf<D, AggregateHaving> & { partitionBy?: undefined },
    params?: ParamsOf<FilterQueryOf<D>>
  ): Promise<AggregateResponse[]>
  async aggregate(
    request: AggregateRequestOf<D, AggregateHaving>,
    params?: ParamsOf<FilterQueryOf<D>>
  ): Promise<AggregateResponse[] | AggregatePage | PartitionedAggregates>
  async aggregate(request: AggregateRequest, params: ResourceParams = {}): Promise<unknown> {
    // Partitions are the plugin's relation aggregates, keyed by any stored field (a hidden foreign key too):
    // a client's own call cannot ask for them, or it would read that field's values.
    if (params.provider && !params.queryModel && request?.partitionBy !== undefined) {
      throw badField('partitionBy', 'is not part of an aggregate request')
    }
    const scoped = await this.scoped({ method: 'aggregate', params })
    const { filter } = this.readQuery(scoped, true)
    const access = await callerAccess(this.resource, params)
    this.checkFieldUse(access, { filter }, this.pathsOf(scoped))
    const through = scoped.queryModel ? scoped.query?.through : undefined
    const link = through ? await this.store.link(scoped, through) : undefined
    return aggregateRecords(this.store, request, scoped, filter, link, access)
  }

  async create(data: DataOf<D>, params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>>
  async create(data: DataOf<D>[], params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  async create(data: ResourceRecord | ResourceRecord[], params: ResourceParams = {}): Promise<unknown> {
    if (Array.isArray(data)) multiLimit(this.resource, 'create', data.length, this.optionsOf(params).multi)
    const scoped = await this.scoped({ method: 'create', params, data })
    // The selection and every record are checked (encoded) before anything is written.
    const { select } = this.readQuery(scoped)
    await this.checkWrite(params, scoped, { select })
    const fields = projection(this.resource, select)
    const rows = (Array.isArray(data) ? data : [data]).map((record) =>
      withVersion(this.Model, this.resource, encodeRow(this.resource, record), 'create')
    )
    const created = await insertRecords(this.store, scoped, rows, fields)
    return Array.isArray(data) ? created : created[0]
  }

  /**
   * Creates each record, or changes the record holding the same `upsert.key` to the fields the body holds,
   * race-free on each database (see `dialect/upsert.ts`). The call is a create and a patch at once:
   * `authorize` rules it as both, so a record the caller may not patch is a 409 and nothing is written.
   * Each record's event says which it was, `created` or `patched`.
   */
  async upsert(data: DataOf<D>, params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>>
  async upsert(data: DataOf<D>[], params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  async upsert(data: ResourceRecord | ResourceRecord[], params: ResourceParams = {}): Promise<unknown> {
    if (!this.resource.upsertKey) {
      throw new MethodNotAllowed(`${this.resource.name} has no upsert key (upsert: { key: [...] })`, {
        resource: this.resource.name,
        option: 'upsert'
      })
    }
    const many = Array.isArray(data)
    if (many) multiLimit(this.resource, 'create', data.length, this.optionsOf(params).multi)
    // Each record may be a create or a patch of its own: a precondition names neither.
    preconditionOf(this.resource, params, null)
    const created = await this.scoped({ method: 'create', params, data })
    const patched = await this.scoped({ method: 'patch', params, id: null, data })
    const { select } = this.readQuery(created)
    await this.checkWrite(params, created, { select })
    const fields = projection(this.resource, select)
    const writes = (many ? data : [data]).map((record, index) =>
      this.upsertWrite(record, many ? `body.${index}` : 'body', params.createOnly)
    )
    const written = await upsertRecords(this.store, created, patched, writes, fields)
    return many ? written : written[0]
  }

  /** A record of an upsert, encoded: its row with the create defaults, and the columns it changes. */
  private upsertWrite(record: ResourceRecord, at: string, createOnly: ResourceRecord = {}): UpsertWrite {
    const { resource } = this
    for (const field of resource.upsertKey!) {
      if (record?.[field.name] === undefined || record[field.name] === null) {
        throw badField(`${at}.${field.name}`, 'is required: it is the upsert key')
      }
    }
    const given = encodeRow(resource, record)
    const kept = new Set([resource.idField.column, ...resource.upsertKey!.map((field) => field.column)])
    const set = Object.keys(given).filter((column) => !kept.has(column))
    const defaults = (this.createDefaults ??= createDefaultsOf(resource))
    const insert = encodeRow(resource, { ...defaults, ...createOnly, ...record })
    return { insert: withVersion(this.Model, resource, insert, 'create'), set }
  }

  /** The create schema's defaults, which an upsert that creates fills in (read once). */
  private createDefaults?: ResourceRecord

  /**
   * Creates every record of a CSV or NDJSON text (`{ csv }`, `{ ndjson }`) or of a list (`{ records }`), each
   * as `create` would with the call's params, a batch per transaction; `params.query` takes `dryRun`,
   * `idempotencyKey` and `onConflict`. Answers the import's report ([import](../../docs/guide/import.md)).
   */
  async import(data: unknown, params: ResourceParams = {}): Promise<unknown> {
    if (!this.importer) throw new MethodNotAllowed(`${this.resource.name}: import is not registered`)
    return this.importer(data, params)
  }

  /**
   * With `update.replace` set, `update` replaces the record: every field a client may write and the body leaves
   * out becomes null (the body was validated against the create schema, so defaults are filled in). Otherwise
   * `update` is a partial update like `patch`, which is what the spec's PUT route is.
   */
  async update(id: NullableId, data: PatchOf<D>, params?: ParamsOf<WriteQueryOf<D>>): Promise<RecordOf<D>>
  async update(id: NullableId, data: ResourceRecord, params: ResourceParams = {}): Promise<unknown> {
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

  async patch(id: Id, data: PatchOf<D>, params?: ParamsOf<WriteQueryOf<D>>): Promise<RecordOf<D>>
  async patch(id: null, data: PatchOf<D>, params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  async patch(id: NullableId, data: ResourceRecord, params: ResourceParams = {}): Promise<unknown> {
    if (id !== null) return this.changeOne('patch', id, data, params)
    const max = multiLimit(this.resource, 'patch', undefined, this.optionsOf(params).multi)
    const scoped = await this.scoped({ method: 'patch', params, id: null, data })
    const { filter, select } = this.readQuery(scoped, true, true)
    await this.checkWrite(params, scoped, { filter, select })
    preconditionOf(this.resource, scoped, null)
    const fields = projection(this.resource, select)
    return changeRecords(this.store, scoped, this.encodeChange(data), filter, fields, max)
  }

  private async changeOne(method: string, id: Id, data: ResourceRecord, params: ResourceParams) {
    const scoped = await this.scoped({ method, params, id, data })
    const { filter, select } = this.readQuery(scoped, false, true)
    await this.checkWrite(params, scoped, { filter, select })
    const precondition = preconditionOf(this.resource, scoped, id)
    const fields = projection(this.resource, select)
    const row = this.encodeChange(data)
    return changeRecord(this.store, scoped, id, row, filter, fields, precondition)
  }

  /** The columns a change writes: never the id; the next version where records have one. */
  private encodeChange(data: ResourceRecord) {
    const row = encodeRow(this.resource, data)
    delete row[this.resource.idField.column]
    return withVersion(this.Model, this.resource, row, 'change')
  }

  async remove(id: Id, params?: ParamsOf<WriteQueryOf<D>>): Promise<RecordOf<D>>
  async remove(id: null, params?: ParamsOf<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  async remove(id: NullableId, params: ResourceParams = {}): Promise<unknown> {
    const max = id === null ? multiLimit(this.resource, 'remove', undefined, this.optionsOf(params).multi) : 1
    const scoped = await this.scoped({ method: 'remove', params, id })
    const { filter, select } = this.readQuery(scoped, id === null, true)
    await this.checkWrite(params, scoped, { filter, select })
    const precondition = preconditionOf(this.resource, scoped, id)
    const fields = projection(this.resource, select)
    return removeRecords(this.store, scoped, id, filter, fields, max, precondition)
  }

  /**
   * A write's filter and `$select` are checked like a read's. Its answer is not narrowed here: its records
   * are also what the write's events carry to connections that may read more, so each transport gives the
   * caller its readable part (`externalRecords`, GraphQL's mutations) and each connection its own.
   */
  private async checkWrite(params: ResourceParams, scoped: ResourceParams, query: ResourceQuery) {
    const answerFields = scoped.queryModel ? scoped.query?.answerFields : undefined
    const checked = answerFields ? { ...query, answerFields } : query
    this.checkFieldUse(await callerAccess(this.resource, params), checked, this.pathsOf(scoped))
  }

  private pathsOf(params: ResourceParams) {
    return params.queryModel ? MODEL_PATHS : FEATHERS_PATHS
  }

  /** The filter and selection of a call, from the query model or from Feathers' query syntax. */
  private readQuery(
    params: ResourceParams,
    collection = false,
    precondition = false
  ): { filter?: Filter; select?: string[] } {
    if (params.queryModel) return { filter: params.query?.filter, select: params.query?.select }
    const { filter, select } = this.feathersRequest(params, collection, precondition)
    return { filter, select }
  }

  /**
   * A Feathers caller's query, checked and translated; `collection` for find, which alone pages and sorts;
   * `precondition` for the writes, which take `$ifMatch`.
   */
  private feathersRequest(
    params: ResourceParams,
    collection: boolean,
    precondition = false
  ): FeathersRequest {
    return this.feathersQuery.parse(params.query as Query | undefined, {
      collection,
      external: !!params.provider,
      precondition
    })
  }
}

/** Where a refused field use is in the query: the query model's names, or Feathers' query syntax. */
const MODEL_PATHS = { filter: 'filter', sorting: 'sorting', select: 'select' }
const FEATHERS_PATHS = { filter: '', sorting: '$sort', select: '$select' }

/**
 * A method as the class defines it: Feathers wraps each registered service's methods in its hooks on the
 * instance, never on the prototype.
 */
function unhooked(method: 'find' | 'get' | 'create' | 'update' | 'patch' | 'remove') {
  return ResourceService.prototype[method] as (...args: unknown[]) => Promise<unknown>
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
