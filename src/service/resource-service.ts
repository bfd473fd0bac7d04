import { Forbidden, NotFound } from '@feathersjs/errors'
import type { Id, Params } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { Readable } from 'node:stream'
import { badField } from '../errors'
import { decodeValue, encodeRow, encodeValue, rowDecoder, type RowDecoder } from '../resource/codec'
import type { ResolvedResource } from '../resource/resolve'
import {
  applyParsedFilter,
  keyName,
  parseFilter,
  qualified,
  type ParsedFilter,
  type SqlTarget
} from '../query/compile-filter'
import { orderKey, orderSql, sortTerms, whereAfter, type SortTerm } from '../query/compile-sort'
import { dialectOf } from '../query/dialect'
import { resolveQueryLimits, type QueryLimits } from '../query/limits'
import type {
  AggregateRequest,
  AggregateResponse,
  Filter,
  OffsetPaging,
  Page,
  PartitionedAggregates,
  PartitionedPages,
  ResourceQuery
} from '../query/model'
import { andFilters } from '../query/filters'
import { runQuery } from './database-errors'
import { ambientTransaction } from './transaction'
import { compileAggregate } from '../aggregate/compile'
import { fullProjection, projection, type Projection } from './projection'
import { CompiledStatement, standIns } from './compiled-statement'
import { BoundedCache } from './bounded-cache'

export type ResourceRecord = Record<string, unknown>

export interface ResourceParams extends Params<ResourceQuery> {
  /**
   * Filters ANDed into every statement of the call: the authorization filter and defaultFilter, set by the
   * plugin's hooks. Kept apart from `query.filter` so that no hook can lose them by replacing the filter.
   */
  scope?: Filter
  /** `find` returns a Readable object stream of records instead of a page (CSV export). */
  stream?: boolean
  /**
   * A batched lookup of records by id on behalf of references (GraphQL one-relations): rules that scope
   * collections (`defaultFilter`) do not apply, as they do not for `get`; `authorize` does.
   */
  lookup?: boolean
  /** An open transaction (compatible with @feathersjs/knex's `transaction` hooks). */
  transaction?: { trx: Knex.Transaction }
  headers?: Record<string, string | string[] | undefined>
}

export interface ResourceServiceOptions {
  Model: Knex
  /** What one filter may hold, and the statements kept per shape (QueryLimits has the defaults). */
  limits?: QueryLimits
}

const ROW_NUMBER = '__row_number'
const PARTITION_TOTAL = '__partition_total'
const STREAM_BATCH = 1000
/** Statement shapes kept per resource, within `limits.compiledStatementBytes`. */
const STATEMENT_SHAPES = 500

/**
 * A Feathers service over one resource's table. Every method reads `params.query` in the query model and
 * `params.scope`; every statement goes through the one filter and sort compiler.
 */
export class ResourceService {
  readonly resource: ResolvedResource
  readonly Model: Knex

  constructor(resource: ResolvedResource, options: ResourceServiceOptions) {
    this.resource = resource
    this.Model = options.Model
    this.target = { resource, dialect: dialectOf(this.Model), table: resource.table }
    this.idColumn = qualified(this.target, resource.idField)
    this.limits = resolveQueryLimits(options.limits)
    this.statements = new BoundedCache(
      STATEMENT_SHAPES,
      this.limits.compiledStatementBytes,
      (statement) => statement?.bytes ?? 0
    )
  }

  private readonly target: SqlTarget
  /** The quoted, qualified column list of each projection, as SQL. */
  private readonly columnLists = new WeakMap<Projection, string>()
  /** The row decoder of each projection, generated once. */
  private readonly decoders = new WeakMap<Projection, RowDecoder>()
  /** Statements compiled once per shape (reads by id, pages, counts); `null`: the shape cannot be. */
  private readonly statements: BoundedCache<CompiledStatement | null>
  private readonly idColumn: string
  private readonly limits: Readonly<Required<QueryLimits>>

  /** The caller's transaction, the one the hook chain runs in, or the pool. */
  private knex(params: ResourceParams): Knex {
    return params.transaction?.trx ?? ambientTransaction(this.Model) ?? this.Model
  }

  private db(params: ResourceParams = {}) {
    const knex = this.knex(params)
    return knex(this.resource.table)
  }

  /** The records a call may see: its scope ANDed with `filter`, checked and encoded. */
  private visible(params: ResourceParams, filter: Filter | undefined): ParsedFilter {
    const scoped = params.scope || filter ? andFilters(params.scope, filter) : undefined
    return parseFilter(this.target, scoped, this.limits)
  }

  /**
   * SELECT of the projected columns, limited to live records and to `visible`, binding `bound` for its
   * values (stand-ins when the statement is compiled once for its shape).
   */
  private selectWhere(
    params: ResourceParams,
    visible: ParsedFilter,
    fields: Projection,
    bound: readonly unknown[] = visible.values
  ) {
    let columns = this.columnLists.get(fields)
    if (!columns) {
      // Quoted once, not on every compile: knex wraps each qualified name anew each time it builds a SELECT.
      const names = fields.stored.map((field) => qualified(this.target, field))
      columns = this.Model.raw(names.map(() => '??').join(', '), names).toSQL().sql
      this.columnLists.set(fields, columns)
    }
    return this.whereVisible(this.db(params).select(this.Model.raw(columns)), visible, bound)
  }

  private whereVisible(
    builder: Knex.QueryBuilder,
    visible: ParsedFilter,
    bound: readonly unknown[] = visible.values
  ) {
    const { softDeleteColumn, table } = this.resource
    if (softDeleteColumn) builder.whereNull(`${table}.${softDeleteColumn}`)
    return applyParsedFilter(builder, this.target, visible, bound)
  }

  /**
   * Runs the statement `build` makes with `values` bound. Its SQL depends only on `shape`: it is compiled
   * once per shape, with stand-ins for the values (numbers for those from `integersFrom` on, which knex
   * takes as LIMIT and OFFSET), and run as raw SQL. A shape knex will not compile that way is built anew.
   */
  private async runCompiled(
    params: ResourceParams,
    shape: string,
    values: readonly unknown[],
    build: (bound: readonly unknown[]) => Knex.QueryBuilder,
    integersFrom = values.length
  ): Promise<ResourceRecord[]> {
    const statement = this.statements.get(shape, () => {
      const compiled = build(standIns(values.length, integersFrom)).toSQL()
      return CompiledStatement.of(compiled, values.length, integersFrom, this.target.dialect) ?? null
    })
    if (!statement) return runQuery(build(values))
    return statement.rows(await runQuery(statement.query(this.knex(params), values)))
  }

  private decoder(fields: Projection) {
    let decode = this.decoders.get(fields)
    if (!decode) {
      decode = rowDecoder(fields.stored, fields.computed)
      this.decoders.set(fields, decode)
    }
    return decode
  }

  private checkPaging(paging: OffsetPaging) {
    const { limit, offset = 0 } = paging
    // Safe integers only: knex would bind 1e20 as a string and read 1e23 as 1.
    if (!Number.isSafeInteger(limit) || limit < 0) throw badField('paging.limit', 'must be a non-negative integer')
    if (!Number.isSafeInteger(offset) || offset < 0) throw badField('paging.offset', 'must be a non-negative integer')
    return { limit, offset }
  }

  async find(params: ResourceParams & { stream: true }): Promise<Readable>
  async find(params?: ResourceParams): Promise<Page<ResourceRecord> | ResourceRecord[] | PartitionedPages<ResourceRecord>>
  async find(params: ResourceParams = {}): Promise<unknown> {
    const query = params.query ?? {}
    if (query.partitionBy) return this.findPartitioned(params, query)

    const terms = sortTerms(this.target, this.sortingOf(query))
    // A keyset stream reads each batch's last sort keys.
    const fields = projection(this.resource, query.select, params.stream ? terms.map((term) => term.field) : [])
    const visible = this.visible(params, query.filter)
    const decode = this.decoder(fields)
    if (params.stream) return this.stream(this.selectWhere(params, visible, fields), terms, decode)

    const order = orderSql(terms)
    const ordered = (bound: readonly unknown[]) =>
      this.selectWhere(params, visible, fields, bound).orderByRaw(order.sql, order.bindings)
    const shape = `${fields.key}|${orderKey(terms)}|${visible.key}`
    if (!query.paging) return (await this.runCompiled(params, `all|${shape}`, visible.values, ordered)).map(decode)

    const { limit, offset } = this.checkPaging(query.paging)
    const filterValues = visible.values.length
    // One row more than asked tells whether a next page exists without counting. Knex leaves out OFFSET 0.
    const values = offset > 0 ? [...visible.values, limit + 1, offset] : [...visible.values, limit + 1]
    const rows = await this.runCompiled(
      params,
      `${offset > 0 ? 'page-offset' : 'page'}|${shape}`,
      values,
      (bound) => {
        const page = ordered(bound).limit(bound[filterValues] as number)
        return offset > 0 ? page.offset(bound[filterValues + 1] as number) : page
      },
      filterValues
    )
    const page: Page<ResourceRecord> = {
      pageInfo: { hasNextPage: rows.length > limit, hasPreviousPage: offset > 0 },
      nodes: rows.slice(0, limit).map(decode)
    }
    if (query.totalCount) page.totalCount = await this.count(params, visible)
    return page
  }

  /** The client's sorting, or the resource's defaultSort when the client asks for none. */
  private sortingOf(query: ResourceQuery) {
    return query.sorting?.length ? query.sorting : this.resource.query.defaultSort
  }

  private async count(params: ResourceParams, visible: ParsedFilter) {
    const [row] = await this.runCompiled(params, `count|${visible.key}`, visible.values, (bound) =>
      this.whereVisible(this.db(params), visible, bound).count({ total: '*' })
    )
    return Number((row as { total: unknown }).total)
  }

  /**
   * One page per distinct value of `partitionBy` in a single statement: ROW_NUMBER() numbers the rows of each
   * partition in the requested order and the outer query keeps each partition's window.
   */
  private async findPartitioned(params: ResourceParams, query: ResourceQuery): Promise<PartitionedPages<ResourceRecord>> {
    const target = this.target
    const partitionField = this.resource.fieldMap.get(query.partitionBy!)
    if (!partitionField || partitionField.computed) throw badField('partitionBy', `unknown field "${query.partitionBy}"`)
    const { limit, offset } = this.checkPaging(query.paging ?? { limit: Number.MAX_SAFE_INTEGER })
    const terms = sortTerms(target, this.sortingOf(query))
    const order = orderSql(terms)
    const partition = qualified(target, partitionField)
    const fields = projection(this.resource, query.select, [partitionField])
    const decode = this.decoder(fields)
    const visible = this.visible(params, query.filter)
    const window = visible.values.length
    const build = (bound: readonly unknown[]) => {
      const inner = this.selectWhere(params, visible, fields, bound).select(
        this.Model.raw(`ROW_NUMBER() OVER (PARTITION BY ?? ORDER BY ${order.sql}) AS ??`, [
          partition,
          ...order.bindings,
          ROW_NUMBER
        ])
      )
      if (query.totalCount) {
        inner.select(this.Model.raw('COUNT(*) OVER (PARTITION BY ??) AS ??', [partition, PARTITION_TOTAL]))
      }
      return this.knex(params)
        .select('*')
        .from(inner.as('partitioned'))
        .where(ROW_NUMBER, '>', bound[window] as number)
        .andWhere(ROW_NUMBER, '<=', bound[window + 1] as number)
        .orderBy([{ column: partitionField.column }, { column: ROW_NUMBER }])
    }
    const shape = [
      'partitioned',
      fields.key,
      keyName(partitionField),
      orderKey(terms),
      query.totalCount ? 'total' : '',
      visible.key
    ].join('|')
    const rows = await this.runCompiled(params, shape, [...visible.values, offset, offset + limit + 1], build)
    const partitions = new Map<string, { key: unknown; rows: ResourceRecord[]; total?: number }>()
    for (const row of rows) {
      const key = decodeValue(partitionField.kind, row[partitionField.column])
      let entry = partitions.get(String(key))
      if (!entry) {
        entry = { key, rows: [], total: query.totalCount ? Number(row[PARTITION_TOTAL]) : undefined }
        partitions.set(String(key), entry)
      }
      entry.rows.push(row)
    }
    return {
      partitions: [...partitions.values()].map(({ key, rows: partitionRows, total }) => ({
        key,
        page: {
          pageInfo: { hasNextPage: partitionRows.length > limit, hasPreviousPage: offset > 0 },
          nodes: partitionRows.slice(0, limit).map(decode),
          ...(total === undefined ? {} : { totalCount: total })
        }
      }))
    }
  }

  /**
   * Every matching record in order, read in keyset batches: the next batch is fetched only when the consumer
   * has taken the previous one (back-pressure), no connection is held between batches, and destroying the
   * stream stops the reads. (Knex's own stream() buffers the whole result on SQLite.)
   */
  private stream(builder: Knex.QueryBuilder, terms: SortTerm[], decode: (row: ResourceRecord) => ResourceRecord): Readable {
    const order = orderSql(terms)
    async function* batches() {
      let last: ResourceRecord | undefined
      for (;;) {
        const batch = builder.clone()
        if (last) whereAfter(batch, terms, last)
        const rows: ResourceRecord[] = await runQuery(batch.orderByRaw(order.sql, order.bindings).limit(STREAM_BATCH))
        for (const row of rows) yield decode(row)
        if (rows.length < STREAM_BATCH) return
        last = rows[rows.length - 1]
      }
    }
    return Readable.from(batches(), { objectMode: true, highWaterMark: STREAM_BATCH })
  }

  /**
   * count/sum/avg/min/max of the records visible to the call (scope, `query.filter`, soft delete), grouped
   * by `request.groupBy`, in one statement; with `partitionBy`, for many parents at once.
   */
  async aggregate(
    request: AggregateRequest & { partitionBy: string },
    params?: ResourceParams
  ): Promise<PartitionedAggregates>
  async aggregate(
    request: AggregateRequest & { partitionBy?: undefined },
    params?: ResourceParams
  ): Promise<AggregateResponse[]>
  async aggregate(
    request: AggregateRequest,
    params?: ResourceParams
  ): Promise<AggregateResponse[] | PartitionedAggregates>
  async aggregate(request: AggregateRequest, params: ResourceParams = {}): Promise<unknown> {
    const builder = this.whereVisible(this.db(params), this.visible(params, params.query?.filter))
    const { query, decode } = compileAggregate(this.Model, builder, this.target, request)
    return decode(await runQuery(query))
  }

  private idValue(id: Id) {
    return encodeValue(this.resource.idField, id, 'id')
  }

  private async getRecord(id: Id, params: ResourceParams, filter?: Filter, fields = fullProjection(this.resource)) {
    const idValue = this.idValue(id)
    const visible = this.visible(params, filter)
    const idAt = visible.values.length
    const shape = `get|${fields.key}|${visible.key}`
    const [row] = await this.runCompiled(params, shape, [...visible.values, idValue], (bound) =>
      this.selectWhere(params, visible, fields, bound).where(this.idColumn, bound[idAt] as Knex.Value).limit(1)
    )
    return row ? this.decoder(fields)(row) : undefined
  }

  async get(id: Id, params: ResourceParams = {}): Promise<ResourceRecord> {
    const query = params.query ?? {}
    const record = await this.getRecord(id, params, query.filter, projection(this.resource, query.select))
    if (!record) throw new NotFound(`No ${this.resource.name} found for id '${id}'`)
    return record
  }

  /**
   * The record `id` for an UPDATE or DELETE, scoped like a read, so the statement itself can never reach a
   * record outside what the caller may see.
   */
  private writableById(params: ResourceParams, id: Id) {
    return this.whereVisible(this.db(params), this.visible(params, params.query?.filter)).where(
      this.idColumn,
      this.idValue(id)
    )
  }

  /** Runs `work` in the caller's transaction or a new one, so a failed check leaves no partial write. */
  private async inTransaction<T>(params: ResourceParams, work: (params: ResourceParams) => Promise<T>) {
    const open = this.knex(params)
    if (open !== this.Model) return work({ ...params, transaction: { trx: open as Knex.Transaction } })
    return runQuery(this.Model.transaction((trx) => work({ ...params, transaction: { trx } })))
  }

  async create(data: ResourceRecord, params: ResourceParams = {}): Promise<ResourceRecord> {
    const row = encodeRow(this.resource, data)
    const { idField } = this.resource
    return this.inTransaction(params, async (inner) => {
      const dialect = dialectOf(this.Model)
      const inserted: unknown[] = await runQuery(
        dialect.name === 'postgres' ? this.db(inner).insert(row, [idField.column]) : this.db(inner).insert(row)
      )
      const generated = inserted[0] as unknown
      const id = (row[idField.column] ??
        (generated && typeof generated === 'object' ? (generated as ResourceRecord)[idField.column] : generated)) as Id
      const record = await this.getRecord(id, inner)
      // Writing a record the caller could not read back is refused, not half done.
      if (!record) throw new Forbidden(`The new ${this.resource.name} is outside what you may access`)
      return record
    })
  }

  async patch(id: Id, data: ResourceRecord, params: ResourceParams = {}): Promise<ResourceRecord> {
    const row = encodeRow(this.resource, data)
    delete row[this.resource.idField.column]
    return this.inTransaction(params, async (inner) => {
      if (Object.keys(row).length > 0) {
        const changed = await runQuery(this.writableById(inner, id).update(row))
        if (!changed) throw new NotFound(`No ${this.resource.name} found for id '${id}'`)
      }
      const record = await this.getRecord(id, inner, inner.query?.filter)
      if (!record) {
        if (Object.keys(row).length === 0) throw new NotFound(`No ${this.resource.name} found for id '${id}'`)
        throw new Forbidden(`The update would move ${this.resource.name} '${id}' outside what you may access`)
      }
      return record
    })
  }

  async remove(id: Id, params: ResourceParams = {}): Promise<ResourceRecord> {
    return this.inTransaction(params, async (inner) => {
      const record = await this.get(id, inner)
      const builder = this.writableById(inner, id)
      const { softDeleteColumn } = this.resource
      const removed = await runQuery(
        softDeleteColumn ? builder.update({ [softDeleteColumn]: new Date() }) : builder.delete()
      )
      if (!removed) throw new NotFound(`No ${this.resource.name} found for id '${id}'`)
      return record
    })
  }
}

/**
 * The registered (hook-running) service of a resource. Feathers types `app.service` for its own service
 * shapes, so the one cast lives here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function resourceService(app: { service(path: string): any }, resource: ResolvedResource): ResourceService {
  return app.service(resource.basePath) as ResourceService
}
