import { BadRequest, Forbidden, MethodNotAllowed, NotFound } from '@feathersjs/errors'
import type { Id, NullableId, Paginated, Params, Query } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { decodeValue, encodeRow, encodeValue, rowDecoder, type RowDecoder } from '../resource/codec'
import type { ResolvedField, ResolvedResource } from '../resource/resolve'
import {
  applyParsedFilter,
  compare,
  keyName,
  parseFilter,
  qualified,
  storedColumn,
  type ParsedFilter,
  type SqlTarget
} from '../query/compile-filter'
import { orderKey, orderSql, sortTerms, type SortTerm } from '../query/compile-sort'
import { encodePosition, keysetCondition, positionOf, reversedTerms } from '../query/keyset'
import { dialectOf, placeholderFor } from '../dialect/dialect'
import { resolveQueryLimits, type QueryLimits } from '../resource/defaults'
import type {
  AggregatePage,
  AggregateRequest,
  AggregateResponse,
  Filter,
  Keyset,
  LinkQuery,
  OffsetPaging,
  Page,
  PartitionedAggregates,
  Partition,
  PartitionedPages,
  ResourceQuery,
  Scalar
} from '../model/query'
import { andFilters } from '../query/filters'
import { runQuery, withoutUnshownColumns } from '../dialect/database-errors'
import { writeTransaction } from '../dialect/sqlite-locks'
import { ambientTransaction } from './transaction'
import { compileAggregate, decodeAggregateRows, needsSqliteFunctions } from '../aggregate/compile'
import { shouldIgnoreGroupIndexes, tableIndexes } from '../dialect/mysql-group-index'
import { groupKeys, PARTITION_ALIAS, planAggregate, type AggregatePlan } from '../aggregate/plan'
import { withSqliteFunctions } from '../aggregate/sqlite-functions'
import { fullProjection, projection, type Projection } from '../query/projection'
import { answeredRecords } from './written-records'
import { CompiledStatement, standIns } from './compiled-statement'
import { BoundedCache } from '../common/bounded-cache'
import { callScope, type ScopeCall } from '../authorization/call-scope'
import { multiLimit, type MultiMethod } from './multi'
import { betterSqliteClient } from '../dialect/better-sqlite3'
import { FeathersQueryParser, type FeathersRequest } from '../query/feathers-syntax'
import { writableFields } from '../resource/input-schemas'
import { pageSizes } from '../resource/resolve'
import { relationScopes } from '../authorization/relation-scopes'
import { callContext } from '../authorization/call-scope'
import { readGuards } from './hooks'
import type { RelationScopes } from '../query/relation-filter'
import { REST_DEFAULT_RESULT_SIZE } from '../rest/collection-query'
import { copyWith } from '../common/copy-with'
import type { ResourceParams, ResourceRecord } from '../model/records'

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

/** A many-to-many read's links: the join resource's table under this alias, joined to the read records. */
const LINK_ALIAS = '__fq_link'
const PARTITION = '__fq_partition'

/** The links of a many-to-many read, resolved: where they are and which of them the read goes through. */
interface Link {
  target: SqlTarget
  foreignKey: ResolvedField
  otherKey: ResolvedField
  /** The parents' links within what the caller may read of the join resource. */
  filter: Filter
}


const ROW_NUMBER = '__row_number'
const PARTITION_TOTAL = '__partition_total'
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
    this.idColumn = storedColumn(this.target, resource.idField)
    this.scoped = callScope(resource, options.registered)
    this.registered = options.registered
    this.related = options.related ?? (() => undefined)
    this.feathersQuery = new FeathersQueryParser(resource)
    const sizes = pageSizes(resource, REST_DEFAULT_RESULT_SIZE)
    this.paginate = { default: sizes.default, max: sizes.max }
    this.limits = resolveQueryLimits(options.limits)
    this.preparedBytes = options.reuseStatements === false ? undefined : this.limits.preparedStatementBytes
    this.statements = new BoundedCache(
      STATEMENT_SHAPES,
      this.limits.compiledStatementBytes,
      (statement) => statement?.bytes ?? 0
    )
  }

  /** The call's params with its scope (authorize, defaultFilter), worked out when the method runs. */
  private readonly scoped: (call: ScopeCall) => ResourceParams | Promise<ResourceParams>
  private readonly registered: () => unknown
  private readonly related: (name: string) => ResourceService | undefined
  private readonly feathersQuery: FeathersQueryParser
  /** Feathers callers' page sizes: the resource's REST default and maximum. */
  private readonly paginate: { default: number; max: number }

  private readonly target: SqlTarget
  /** The quoted, qualified column list of each projection, as SQL. */
  private readonly columnLists = new WeakMap<Projection, string>()
  /** The row decoder of each projection, generated once. */
  private readonly decoders = new WeakMap<Projection, RowDecoder>()
  /** Statements compiled once per shape (reads by id, pages, counts); `null`: the shape cannot be. */
  private readonly statements: BoundedCache<CompiledStatement | null>
  private readonly idColumn: string
  private readonly limits: Readonly<Required<QueryLimits>>
  /** The SQL text kept prepared per connection, or undefined when compiled reads go through knex. */
  private readonly preparedBytes: number | undefined

  /** The caller's transaction, the one the hook chain runs in, or the pool. */
  private knex(params: ResourceParams): Knex {
    return params.transaction?.trx ?? ambientTransaction(this.Model) ?? this.Model
  }

  private db(params: ResourceParams = {}) {
    const knex = this.knex(params)
    return knex(this.resource.table)
  }

  /**
   * The records a call may see: its scope ANDed with `filter`, checked and encoded; for a many-to-many read,
   * with the links it goes through. Relation filters first need the related resources' scopes for the caller.
   */
  private async visible(params: ResourceParams, filter: Filter | undefined, link?: Link): Promise<ParsedFilter> {
    const scoped = params.scope || filter ? andFilters(params.scope, filter) : undefined
    const pending = this.relationScopes(params, [
      [this.resource, scoped],
      ...(link ? [[link.target.resource, link.filter] as const] : [])
    ])
    return parseFilter(this.target, scoped, this.limits, pending && (await pending), link)
  }

  /** The scopes the relation filters of `roots` need, each asked of its resource's service for this caller. */
  private relationScopes(
    params: ResourceParams,
    roots: ReadonlyArray<readonly [ResolvedResource, Filter | undefined]>
  ): Promise<RelationScopes> | undefined {
    if (roots.every(([resource]) => resource.relationMap.size === 0)) return undefined
    let caller: ResourceParams | undefined
    const scopeOf = (resource: ResolvedResource) =>
      this.relatedService(resource.name).readScope((caller ??= callerOf(params)))
    return relationScopes(roots, scopeOf, this.limits.maxRelationDepth)
  }

  private relatedService(name: string): ResourceService {
    if (name === this.resource.name) return this
    const service = this.related(name)
    if (!service) {
      throw new Error(`${this.resource.name}: no service of resource ${name} to ask what the caller may read`)
    }
    return service
  }

  /**
   * What a `find` by this caller may read of the resource: its guards run and its `authorize` asked (method
   * `find`, the caller's params), with `defaultFilter`. Relation filters and many-to-many reads of other
   * resources apply it to this resource's records, so that they reveal nothing its own `find` would not.
   */
  async readScope(caller: ResourceParams): Promise<Filter | undefined> {
    const context = callContext(this.registered(), { method: 'find', params: caller })
    for (const guard of readGuards(this.resource)) {
      const result = await guard(context)
      if (result && result !== context) Object.assign(context, result)
    }
    return (await this.scoped({ method: 'find', params: context.params as ResourceParams })).scope
  }

  /** The links a many-to-many read goes through: the join resource's records of the parents the caller may read. */
  private async link(params: ResourceParams, through: LinkQuery): Promise<Link> {
    const joinService = this.related(through.resource)
    if (!joinService) throw badField('through.resource', `names no resource ("${through.resource}")`)
    const join = joinService.resource
    const foreignKey = join.fieldMap.get(through.foreignKey)
    const otherKey = join.fieldMap.get(through.otherKey)
    if (!foreignKey || !otherKey || foreignKey.computed || otherKey.computed) {
      throw badField('through', `${join.name} has no fields "${through.foreignKey}" and "${through.otherKey}"`)
    }
    const parents: Filter = { [foreignKey.name]: { in: through.parents } }
    const scope = await joinService.readScope(callerOf(params))
    return {
      target: { resource: join, dialect: this.target.dialect, table: LINK_ALIAS },
      foreignKey,
      otherKey,
      filter: andFilters(parents, scope)!
    }
  }

  /** The read's records joined with their links (each record once per link), live links only. */
  private joinLink(builder: Knex.QueryBuilder, link: Link) {
    const { resource, table } = link.target
    builder.join({ [table]: resource.table }, `${table}.${link.otherKey.column}`, this.idColumn)
    if (resource.softDeleteColumn) builder.whereNull(`${table}.${resource.softDeleteColumn}`)
    return builder
  }

  /**
   * SELECT of the projected columns, limited to live records and to `visible`, binding `bound` for its
   * values (stand-ins when the statement is compiled once for its shape).
   */
  private selectWhere(
    params: ResourceParams,
    visible: ParsedFilter,
    fields: Projection,
    bound: readonly unknown[] = visible.values,
    link?: Link
  ) {
    let columns = this.columnLists.get(fields)
    if (!columns) {
      // Quoted once, not on every compile: knex wraps each qualified name anew each time it builds a SELECT.
      const stored = fields.stored.filter((field) => !field.expression)
      const names = stored.map((field) => storedColumn(this.target, field))
      columns = this.Model.raw(names.map(() => '??').join(', '), names).toSQL().sql
      this.columnLists.set(fields, columns)
    }
    const select = this.db(params).select(this.Model.raw(columns))
    // SQL-computed fields as they are (their expressions may bind values of their own), named as columns.
    for (const field of fields.stored) {
      if (!field.expression) continue
      select.select(this.Model.raw('? AS ??', [qualified(this.target, field), field.column]))
    }
    return this.whereVisible(link ? this.joinLink(select, link) : select, visible, bound)
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
    return runQuery(statement.rows(this.knex(params), values, this.preparedBytes))
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

  /**
   * On the plugin's routes (`params.queryModel`): a `Page`, every record as an array without paging, one page
   * per partition with `partitionBy`. For every other caller: Feathers' `{ total, limit, skip, data }`, or an
   * array with `paginate: false`.
   */
  async find(
    params?: ResourceParams
  ): Promise<Page<ResourceRecord> | ResourceRecord[] | PartitionedPages<ResourceRecord> | Paginated<ResourceRecord>>
  async find(params: ResourceParams = {}): Promise<unknown> {
    const scoped = await this.scoped({ method: 'find', params })
    if (scoped.queryModel) return this.findModel(scoped)
    const request = this.feathersRequest(scoped, true)
    const query: ResourceQuery = { filter: request.filter, sorting: request.sorting, select: request.select }
    const paginate = scoped.paginate ?? this.paginate
    if (paginate === false) {
      const paging = request.limit !== undefined || request.skip > 0
      if (paging) query.paging = { limit: request.limit ?? Number.MAX_SAFE_INTEGER, offset: request.skip }
      const result = await this.findModel(copyWith(scoped, { query }))
      return paging ? (result as Page<ResourceRecord>).data : result
    }
    // As Feathers' adapters do: `$limit` above the maximum gets the maximum, which the page's `limit` says.
    const limit = Math.min(request.limit ?? paginate.default ?? this.paginate.default, paginate.max ?? Infinity)
    query.paging = { limit, offset: request.skip }
    query.totalCount = true
    const page = (await this.findModel(copyWith(scoped, { query }))) as Page<ResourceRecord>
    return { total: page.total!, limit, skip: request.skip, data: page.data }
  }

  /** A Feathers caller's query, checked and translated; `collection` for find, which alone pages and sorts. */
  private feathersRequest(params: ResourceParams, collection: boolean): FeathersRequest {
    return this.feathersQuery.parse(params.query as Query | undefined, { collection, external: !!params.provider })
  }

  private async findModel(params: ResourceParams): Promise<unknown> {
    const query = params.query ?? {}
    if (query.partitionBy || query.through) return this.findPartitioned(params, query)

    const terms = sortTerms(this.target, this.sortingOf(query))
    // A keyset page reads its last record's sort keys.
    const fields = projection(this.resource, query.select, query.keyset ? terms.map((term) => term.field) : [])
    const visible = await this.visible(params, query.filter)
    const decode = this.decoder(fields)
    if (query.keyset) return this.keysetPage(params, query, visible, fields, terms, decode)

    const order = orderSql(terms)
    const ordered = (bound: readonly unknown[]) =>
      this.selectWhere(params, visible, fields, bound).orderByRaw(order.sql, order.bindings)
    const shape = `${fields.key}|${orderKey(terms)}|${visible.key}`
    if (!query.paging) return (await this.runCompiled(params, `all|${shape}`, visible.values, ordered)).map(decode)

    const { limit, offset } = this.checkPaging(query.paging)
    const filterValues = visible.values.length
    // The count needs no row of the page: where the pool can lend a second connection, the database
    // answers both at once instead of one after the other.
    const counting = query.totalCount && this.countsAlongside(params) ? this.count(params, visible) : undefined
    // One row more than asked tells whether a next page exists without counting. Knex leaves out OFFSET 0.
    const values = offset > 0 ? [...visible.values, limit + 1, offset] : [...visible.values, limit + 1]
    const reading = this.runCompiled(
      params,
      `${offset > 0 ? 'page-offset' : 'page'}|${shape}`,
      values,
      (bound) => {
        const page = ordered(bound).limit(bound[filterValues] as number)
        return offset > 0 ? page.offset(bound[filterValues + 1] as number) : page
      },
      filterValues
    )
    const [rows, total] = await Promise.all([reading, counting])
    const page = pageOf(rows, limit, offset, decode)
    if (query.totalCount) page.total = total ?? (await this.totalOf(params, visible, rows.length, limit, offset))
    return page
  }

  /**
   * Whether a page's count runs beside it: not on better-sqlite3, which answers one statement at a time on
   * the event loop anyway, and not inside a transaction, whose one connection runs statements in turn.
   */
  private countsAlongside(params: ResourceParams) {
    // `knex(params)` is the pool itself only outside a transaction.
    return !this.readsSynchronously && this.knex(params) === this.Model
  }

  /**
   * The number of visible records, counted only when the page cannot tell it: a page that holds the last
   * record (one not full, and not past the end) says how many there are.
   */
  private totalOf(params: ResourceParams, visible: ParsedFilter, read: number, limit: number, offset: number) {
    const last = read <= limit && (read > 0 || offset === 0)
    return last ? offset + read : this.count(params, visible)
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
    const link = query.through ? await this.link(params, query.through) : undefined
    const partitionField = link ? link.foreignKey : this.resource.fieldMap.get(query.partitionBy!)
    if (!partitionField || partitionField.computed) throw badField('partitionBy', `unknown field "${query.partitionBy}"`)
    const { limit, offset } = this.checkPaging(query.paging ?? { limit: Number.MAX_SAFE_INTEGER })
    const terms = sortTerms(target, this.sortingOf(query))
    const keyset = query.keyset ? this.keysetReading(query, terms) : undefined
    const readTerms = keyset?.readTerms ?? terms
    const condition = keyset?.condition
    const order = orderSql(readTerms)
    const partition = storedColumn(link ? link.target : target, partitionField)
    // The partition key as the rows carry it: the field itself, or the link's key under an alias of its own.
    const partitionKey = link ? PARTITION : partitionField.column
    const keysetFields = keyset ? terms.map((term) => term.field) : []
    const fields = projection(this.resource, query.select, link ? keysetFields : [partitionField, ...keysetFields])
    const decode = this.decoder(fields)
    const visible = await this.visible(params, query.filter, link)
    const conditionAt = visible.values.length
    const conditionValues = condition?.values ?? []
    const window = conditionAt + conditionValues.length
    const build = (bound: readonly unknown[]) => {
      const inner = this.selectWhere(params, visible, fields, bound, link)
      condition?.apply(inner, bound, conditionAt)
      if (link) inner.select(this.Model.raw('?? AS ??', [partition, PARTITION]))
      inner.select(
        this.Model.raw(`ROW_NUMBER() OVER (PARTITION BY ?? ORDER BY ${order.sql}) AS ??`, [
          partition,
          ...order.bindings,
          ROW_NUMBER
        ])
      )
      // A keyset page's rows start at its cursor: its partitions' totals are counted apart, below.
      if (query.totalCount && !keyset) {
        inner.select(this.Model.raw('COUNT(*) OVER (PARTITION BY ??) AS ??', [partition, PARTITION_TOTAL]))
      }
      return this.knex(params)
        .select('*')
        .from(inner.as('partitioned'))
        .where(ROW_NUMBER, '>', bound[window] as number)
        .andWhere(ROW_NUMBER, '<=', bound[window + 1] as number)
        .orderBy([{ column: partitionKey }, { column: ROW_NUMBER }])
    }
    const shape = [
      'partitioned',
      fields.key,
      link ? `through ${keyName(link.target.resource)}.${keyName(link.otherKey)}` : '',
      keyName(partitionField),
      orderKey(readTerms),
      query.totalCount ? 'total' : '',
      condition ? `keyset ${condition.key}` : '',
      visible.key
    ].join('|')
    const values = [...visible.values, ...conditionValues, offset, offset + limit + 1]
    const rows = await this.runCompiled(params, shape, values, build)
    // Rows come ordered by partition, then by their number within it.
    const data: ResourceRecord[] = []
    const partitions: Partition[] = []
    let current: Partition | undefined
    for (const row of rows) {
      // Decoded keys are strings, numbers or booleans: equal keys are ===.
      const key = decodeValue(partitionField.kind, row[partitionKey])
      if (current === undefined || key !== current.key) {
        current = { key, start: data.length, end: data.length, hasNextPage: false }
        if (query.totalCount) current.total = Number(row[PARTITION_TOTAL])
        partitions.push(current)
      }
      if (current.end - current.start === limit) {
        current.hasNextPage = true
        continue
      }
      data.push(decode(row))
      current.end = data.length
    }
    if (!keyset) return { data, skip: offset, partitions }
    const totals = query.totalCount ? await this.partitionTotals(params, visible, partitionField, link) : undefined
    for (const each of partitions) {
      if (totals) each.total = totals.get(String(each.key)) ?? 0
      if (keyset.keyset.backward) {
        // Read backwards; each partition's records go back into the query's order.
        const reversed = data.slice(each.start, each.end).reverse()
        data.splice(each.start, reversed.length, ...reversed)
        each.hasPreviousPage = each.hasNextPage
        each.hasNextPage = keyset.keyset.before !== undefined
      } else {
        each.hasPreviousPage = keyset.keyset.after !== undefined
      }
    }
    return { data, skip: offset, partitions, keysetFields: keyset.fields }
  }

  /** The number of visible records per value of `partitionField`, in one grouped count. */
  private async partitionTotals(
    params: ResourceParams,
    visible: ParsedFilter,
    partitionField: ResolvedField,
    link?: Link
  ) {
    const partition = storedColumn(link ? link.target : this.target, partitionField)
    const through = link ? `through ${keyName(link.target.resource)}.${keyName(link.otherKey)}` : ''
    const shape = `partition-totals|${through}|${keyName(partitionField)}|${visible.key}`
    const rows = await this.runCompiled(params, shape, visible.values, (bound) =>
      this.whereVisible(link ? this.joinLink(this.db(params), link) : this.db(params), visible, bound)
        .select(this.Model.raw('?? AS ??', [partition, partitionField.column]))
        .count({ [PARTITION_TOTAL]: '*' })
        .groupBy(partition)
    )
    const keyOf = (row: ResourceRecord) => String(decodeValue(partitionField.kind, row[partitionField.column]))
    return new Map(rows.map((row) => [keyOf(row), Number(row[PARTITION_TOTAL])]))
  }

  /** `query.keyset` checked: `{after?}` forward, `{before?, backward: true}` backward. */
  private checkKeyset(query: ResourceQuery): Required<Pick<Keyset, 'backward'>> & Keyset {
    const keyset = query.keyset
    if (!keyset || typeof keyset !== 'object' || Array.isArray(keyset)) {
      throw badField('keyset', 'must be {after} or {before, backward: true}')
    }
    const { after, before, backward, ...rest } = keyset
    const unknown = Object.keys(rest)[0]
    if (unknown !== undefined) throw badField(`keyset.${unknown}`, 'is not part of a keyset')
    if (backward !== undefined && typeof backward !== 'boolean') {
      throw badField('keyset.backward', 'must be a boolean')
    }
    if (backward && after !== undefined) throw badField('keyset.after', 'cannot be combined with backward')
    if (!backward && before !== undefined) throw badField('keyset.before', 'needs backward: true')
    if (query.paging?.offset) throw badField('paging.offset', 'cannot be combined with a keyset')
    return { after, before, backward: backward === true }
  }

  /**
   * The keyset a query reads by: the order it reads in (reversed for a backward page) and the condition
   * that starts it after `after` (or before `before`); no condition at the start (or the end).
   */
  private keysetReading(query: ResourceQuery, terms: SortTerm[]) {
    const keyset = this.checkKeyset(query)
    const readTerms = keyset.backward ? reversedTerms(terms) : terms
    const from = keyset.backward ? keyset.before : keyset.after
    const path = keyset.backward ? 'keyset.before' : 'keyset.after'
    const condition =
      from === undefined ? undefined : keysetCondition(readTerms, encodePosition(terms, from, path), this.target.dialect)
    return { keyset, readTerms, condition, fields: terms.map((term) => term.field.name) }
  }

  /**
   * The `paging.limit` records after `query.keyset.after` (or before its `before`). Unlike an offset, a
   * keyset costs the same wherever the page lies, so reading every record page by page (the CSV export)
   * costs about what one statement would, without holding a connection or the event loop for all of them.
   */
  private async keysetPage(
    params: ResourceParams,
    query: ResourceQuery,
    visible: ParsedFilter,
    fields: Projection,
    terms: SortTerm[],
    decode: RowDecoder
  ): Promise<Page<ResourceRecord>> {
    const { limit } = this.checkPaging(query.paging ?? { limit: Number.NaN })
    if (limit < 1) throw badField('paging.limit', 'a keyset page needs a limit of at least 1')
    const { keyset, readTerms, condition } = this.keysetReading(query, terms)
    const order = orderSql(readTerms)
    const conditionAt = visible.values.length
    // One row more than asked tells whether more records lie beyond the page.
    const values = [...visible.values, ...(condition?.values ?? []), limit + 1]
    const limitAt = values.length - 1
    const shape = `keyset|${fields.key}|${orderKey(readTerms)}|${condition?.key ?? ''}|${visible.key}`
    const rows = await this.runCompiled(
      params,
      shape,
      values,
      (bound) => {
        const builder = this.selectWhere(params, visible, fields, bound)
        condition?.apply(builder, bound, conditionAt)
        return builder.orderByRaw(order.sql, order.bindings).limit(bound[limitAt] as number)
      },
      limitAt
    )
    const page = pageOf(rows, limit, 0, decode)
    page.keysetFields = terms.map((term) => term.field.name)
    if (keyset.backward) {
      page.data.reverse()
      page.hasPreviousPage = page.hasNextPage
      page.hasNextPage = keyset.before !== undefined
    } else {
      page.hasPreviousPage = keyset.after !== undefined
      if (page.hasNextPage) page.keyset = { after: positionOf(terms, page.data[limit - 1]) }
    }
    if (query.totalCount) page.total = await this.count(params, visible)
    return page
  }

  /** better-sqlite3 runs each statement on the event loop: while it reads, the server answers nobody. */
  get readsSynchronously() {
    return betterSqliteClient(this.Model) !== undefined
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
    const link = through ? await this.link(scoped, through) : undefined
    const { maxAggregateGroups: maxGroups, maxFillBuckets } = this.resource
    const plan = planAggregate(this.resource, request, { maxGroups, maxFillBuckets, filter })
    // Partitioned by the links' key when a many-to-many relation's records are aggregated per parent.
    if (link) plan.partition = { field: link.foreignKey, column: storedColumn(link.target, link.foreignKey), alias: PARTITION_ALIAS }
    const knex = this.knex(scoped)
    const withoutGroupIndexes = !link && this.target.dialect.name === 'mysql' && (await this.ignoresGroupIndexes(plan))
    const visible = await this.visible(scoped, filter, link)
    const compile = (bound: readonly unknown[]) => {
      const table = withoutGroupIndexes
        ? knex.from(knex.raw('?? USE INDEX FOR GROUP BY ()', [this.resource.table]))
        : knex(this.resource.table)
      const builder = this.whereVisible(link ? this.joinLink(table, link) : table, visible, bound)
      return compileAggregate(knex, builder, this.target, plan, this.limits)
    }
    // Time zones on SQLite need functions on the statement's connection, and a many-to-many link joins a
    // table of its own: those are built for each call, as every aggregate once was.
    const needsFunctions = needsSqliteFunctions(knex, this.target, plan)
    if (link || needsFunctions) {
      const query = compile(visible.values)
      const run = (built: Knex.QueryBuilder) => runQuery<Array<Record<string, unknown>>>(built)
      const rows = needsFunctions ? await withSqliteFunctions(knex, query, run) : await run(query)
      return decodeAggregateRows(plan, rows)
    }
    // The statement depends on the request (grouping, functions, having, order, paging, zones), on the series a
    // fill spans (which the client's filter bounds) and on the filter's shape; only the filter's values vary
    // from call to call of one dashboard's aggregate, so they are bound into a statement compiled once.
    const fillKeys = plan.fill ? JSON.stringify(plan.fill.keys) : ''
    const shape = `aggregate|${JSON.stringify(request)}|${fillKeys}|${withoutGroupIndexes}|${visible.key}`
    const rows = await this.runCompiled(scoped, shape, visible.values, compile)
    return decodeAggregateRows(plan, rows)
  }

  /** Feathers calls it once the app is set up: what the first aggregate would otherwise wait for. */
  async setup() {
    if (this.target.dialect.name === 'mysql') await tableIndexes(this.Model, this.resource.table).catch(() => undefined)
  }

  /** See group-index.ts: whether MariaDB's index for the grouping would make it fetch every row in turn. */
  private ignoresGroupIndexes(plan: AggregatePlan) {
    const { softDeleteColumn, table, idField } = this.resource
    const groups = groupKeys(plan)
    const firstBucket = groups.findIndex((group) => group.bucket)
    const ordered = firstBucket === -1 ? groups : groups.slice(0, firstBucket)
    const read = [...groups.slice(ordered.length), ...plan.aggregates].map((column) => column.field.column)
    return shouldIgnoreGroupIndexes(this.Model, {
      table,
      groupColumns: ordered.map((group) => group.field.column),
      readColumns: softDeleteColumn ? [...read, softDeleteColumn] : read,
      primaryKey: [idField.column]
    })
  }

  /** The filter and selection of a call, from the query model or from Feathers' query syntax. */
  private readQuery(params: ResourceParams, collection = false): { filter?: Filter; select?: string[] } {
    if (params.queryModel) return { filter: params.query?.filter, select: params.query?.select }
    const { filter, select } = this.feathersRequest(params, collection)
    return { filter, select }
  }

  private idValue(id: Id) {
    return encodeValue(this.resource.idField, id, 'id')
  }

  private async getRecord(id: Id, params: ResourceParams, filter?: Filter, fields = fullProjection(this.resource)) {
    const idValue = this.idValue(id)
    const visible = await this.visible(params, filter)
    const idAt = visible.values.length
    const shape = `get|${fields.key}|${visible.key}`
    const [row] = await this.runCompiled(params, shape, [...visible.values, idValue], (bound) =>
      this.whereIdIs(this.selectWhere(params, visible, fields, bound), bound[idAt] as Knex.Value).limit(1)
    )
    return row ? this.decoder(fields)(row) : undefined
  }

  /**
   * An INSERT or UPDATE of this resource. A constraint the table enforces names its column to the client, but
   * not a column of a hidden or filterOnly field: that would tell clients of a field they are never shown.
   */
  private async runWrite<T>(query: PromiseLike<T>): Promise<T> {
    try {
      return await runQuery(query)
    } catch (error) {
      throw withoutUnshownColumns(error, this.resource)
    }
  }

  /** The record with this id: an integer id bound as the dialect binds integers. */
  private whereIdIs(builder: Knex.QueryBuilder, id: Knex.Value) {
    return compare(builder, this.idColumn, '=', id, placeholderFor(this.target.dialect, this.resource.idField.kind))
  }

  private notFound(id: Id) {
    return new NotFound(`No ${this.resource.name} found for id '${id}'`)
  }

  async get(id: Id, params: ResourceParams = {}): Promise<ResourceRecord> {
    const scoped = await this.scoped({ method: 'get', params, id })
    const { filter, select } = this.readQuery(scoped)
    const record = await this.getRecord(id, scoped, filter, projection(this.resource, select))
    if (!record) throw this.notFound(id)
    return record
  }

  /** Runs `work` in the caller's transaction or a new one, so a failed check leaves no partial write. */
  private async inTransaction<T>(params: ResourceParams, work: (params: ResourceParams) => Promise<T>) {
    const open = this.knex(params)
    if (open !== this.Model) return work(copyWith(params, { transaction: { trx: open as Knex.Transaction } }))
    return runQuery(writeTransaction(this.Model, (trx) => work(copyWith(params, { transaction: { trx } }))))
  }

  /** Whether `method` may change several records (`multi`, per resource, as in Feathers' adapters). */

  async create(data: ResourceRecord, params?: ResourceParams): Promise<ResourceRecord>
  async create(data: ResourceRecord[], params?: ResourceParams): Promise<ResourceRecord[]>
  async create(data: ResourceRecord | ResourceRecord[], params: ResourceParams = {}): Promise<unknown> {
    if (Array.isArray(data)) multiLimit(this.resource, 'create', data.length)
    const scoped = await this.scoped({ method: 'create', params, data })
    // The selection and every record are checked (encoded) before anything is written.
    const fields = projection(this.resource, this.readQuery(scoped).select)
    const rows = (Array.isArray(data) ? data : [data]).map((record) => encodeRow(this.resource, record))
    const created = await this.inTransaction(scoped, async (inner) => {
      const records: ResourceRecord[] = []
      for (const row of rows) records.push(await this.insert(row, inner))
      return answeredRecords(records, fields)
    })
    return Array.isArray(data) ? created : created[0]
  }

  private async insert(row: Record<string, unknown>, params: ResourceParams) {
    const { idField } = this.resource
    const inserted: unknown[] = await this.runWrite(
      this.target.dialect.name === 'postgres' ? this.db(params).insert(row, [idField.column]) : this.db(params).insert(row)
    )
    const generated = inserted[0] as unknown
    const id = (row[idField.column] ??
      (generated && typeof generated === 'object' ? (generated as ResourceRecord)[idField.column] : generated)) as Id
    const record = await this.getRecord(id, params)
    // Writing a record the caller could not read back is refused, not half done.
    if (!record) throw new Forbidden(`The new ${this.resource.name} is outside what you may access`)
    return record
  }

  /**
   * With `update.replace` set, `update` replaces the record: every field a client may write and the body leaves
   * out becomes null (the body was validated against the create schema, so defaults are filled in). Otherwise
   * `update` is a partial update like `patch`, which is what the spec's PUT route is.
   */
  async update(id: NullableId, data: ResourceRecord, params: ResourceParams = {}): Promise<ResourceRecord> {
    if (id === null) throw new MethodNotAllowed(`${this.resource.name}: update replaces one record; use patch for several`)
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
    if (id === null) return this.patchMany(data, params)
    return this.changeOne('patch', id, data, params)
  }

  private async changeOne(method: string, id: Id, data: ResourceRecord, params: ResourceParams) {
    const scoped = await this.scoped({ method, params, id, data })
    const { filter, select } = this.readQuery(scoped)
    const fields = projection(this.resource, select)
    const row = encodeRow(this.resource, data)
    delete row[this.resource.idField.column]
    return this.inTransaction(scoped, async (inner) => {
      if (Object.keys(row).length > 0) {
        const writable = await this.writable(inner, filter)
        const changed = await this.runWrite(this.whereIdIs(writable(), this.idValue(id) as Knex.Value).update(row))
        if (!changed) throw this.notFound(id)
      } else if (!(await this.getRecord(id, inner, filter))) {
        throw this.notFound(id)
      }
      // Read back within the scope only: the change may well take the record out of the call's own filter.
      const record = await this.getRecord(id, inner)
      if (!record) throw new Forbidden(`The update would move ${this.resource.name} '${id}' outside what you may access`)
      return answeredRecords([record], fields)[0]
    })
  }

  /**
   * The records `filter` names within the call's scope, live ones only: what an UPDATE or DELETE may reach.
   * A function making the builder, since a knex builder is a thenable, which an async function would run.
   */
  private async writable(params: ResourceParams, filter: Filter | undefined): Promise<() => Knex.QueryBuilder> {
    const visible = await this.visible(params, filter)
    return () => this.whereVisible(this.db(params), visible)
  }

  /** The ids of the records a multi patch or remove reaches, refused when there are more than `max`. */
  private async idsReached(method: MultiMethod, params: ResourceParams, filter: Filter | undefined, max: number) {
    const rows: ResourceRecord[] = await runQuery(
      (await this.writable(params, filter))().select(this.idColumn).orderBy(this.idColumn).limit(max + 1)
    )
    if (rows.length > max) {
      throw new BadRequest(
        `${this.resource.name}: ${method} changes at most ${max} records at once; narrow the query`
      )
    }
    return rows.map((row) => row[this.resource.idField.column] as Id)
  }

  private async patchMany(data: ResourceRecord, params: ResourceParams): Promise<ResourceRecord[]> {
    const max = multiLimit(this.resource, 'patch')
    const scoped = await this.scoped({ method: 'patch', params, id: null, data })
    const { filter, select } = this.readQuery(scoped, true)
    const fields = projection(this.resource, select)
    const row = encodeRow(this.resource, data)
    delete row[this.resource.idField.column]
    return this.inTransaction(scoped, async (inner) => {
      const ids = await this.idsReached('patch', inner, filter, max)
      if (ids.length === 0) return []
      const byId: Filter = { [this.resource.idField.name]: { in: ids as Scalar[] } }
      if (Object.keys(row).length > 0) await this.runWrite((await this.writable(inner, byId))().update(row))
      const records = (await this.findModel(
        copyWith(inner, {
          queryModel: true,
          query: { filter: byId, sorting: [{ field: this.resource.idField.name, direction: 'ASC' }] }
        })
      )) as ResourceRecord[]
      if (records.length < ids.length) {
        throw new Forbidden(`The update would move ${this.resource.name} records outside what you may access`)
      }
      return answeredRecords(records, fields)
    })
  }

  async remove(id: Id, params?: ResourceParams): Promise<ResourceRecord>
  async remove(id: null, params?: ResourceParams): Promise<ResourceRecord[]>
  async remove(id: NullableId, params: ResourceParams = {}): Promise<unknown> {
    const max = id === null ? multiLimit(this.resource, 'remove') : 1
    const scoped = await this.scoped({ method: 'remove', params, id })
    const { filter, select } = this.readQuery(scoped, id === null)
    const fields = projection(this.resource, select)
    return this.inTransaction(scoped, async (inner) => {
      const ids = id === null ? await this.idsReached('remove', inner, filter, max) : [id]
      if (ids.length === 0) return []
      const byId: Filter = { [this.resource.idField.name]: { in: ids.map((value) => this.idValue(value)) as Scalar[] } }
      const records = (await this.findModel(
        copyWith(inner, {
          queryModel: true,
          query: { filter: andFilters(filter, byId), sorting: [{ field: this.resource.idField.name, direction: 'ASC' }] }
        })
      )) as ResourceRecord[]
      if (id !== null && records.length === 0) throw this.notFound(id)
      const { softDeleteColumn } = this.resource
      const builder = (await this.writable(inner, andFilters(filter, byId)))()
      const removed = await runQuery(softDeleteColumn ? builder.update({ [softDeleteColumn]: new Date() }) : builder.delete())
      if (removed !== records.length) throw id === null ? new Forbidden('Records changed while removing them') : this.notFound(id)
      const answered = answeredRecords(records, fields)
      return id === null ? answered : answered[0]
    })
  }
}

/** The caller's identity and transport (user, authentication, provider, headers, transaction), not the call's query. */
function callerOf(params: ResourceParams): ResourceParams {
  const { query: _query, scope: _scope, lookup: _lookup, paginate: _paginate, ...caller } = params
  return copyWith(caller, { queryModel: true, query: {} })
}

/** A page of `limit` records from `rows`, read with one row more than asked to tell whether a next page exists. */
function pageOf(rows: ResourceRecord[], limit: number, skip: number, decode: RowDecoder): Page<ResourceRecord> {
  return { data: rows.slice(0, limit).map(decode), limit, skip, hasNextPage: rows.length > limit }
}

/**
 * The registered (hook-running) service of a resource. Feathers types `app.service` for its own service
 * shapes, so the one cast lives here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function resourceService(app: { service(path: string): any }, resource: ResolvedResource): ResourceService {
  return app.service(resource.basePath) as ResourceService
}
