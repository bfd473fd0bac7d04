import { runQuery } from '../dialect/database-errors'
import type { Id } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { BadRequest, NotFound } from '@feathersjs/errors'
import { badField } from '../common/errors'
import { dialectOf } from '../dialect/dialect-of'
import { betterSqliteClient } from '../dialect/better-sqlite3'
import { encodeValue, rowDecoder, type RowDecoder } from '../resource/codec'
import type { QueryLimits } from '../resource/query-limits'
import type { ResolvedResource } from '../resource/resolved'
import type { Filter, LinkQuery, ResourceQuery } from '../model/query'
import type { ResourceParams, ResourceRecord } from '../model/records'
import { andFilters } from '../query/filters'
import { parseFilter } from '../query/parse-filter'
import type { ParsedFilter } from '../query/parsed-filter'
import { CountCache, countKey } from './count-cache'
import type { SqlTarget } from '../query/sql-target'
import { fullProjection, type Projection } from '../query/projection'
import { ReadStatements, type Link } from '../query/read-statements'
import { callerOf } from '../authorization/read-scope'
import { relationScopes } from '../authorization/relation-scopes'
import type { RelationScopes } from '../query/relation-filter'
import { joinScopes, NO_JOIN_SCOPES, type JoinScopes } from '../query/relation-joins'
import { ambientTransaction } from './transaction'
import { StatementRunner } from './statement-runner'
import { recordRead } from '../live/read-recorder'

export function notFound(store: ResourceStore, id: Id) {
  return new NotFound(`No ${store.resource.name} found for id '${id}'`)
}

/** Statement texts kept for live queries' records of their reads. */
const SQL_SHAPES_KEPT = 200

/** What a store asks of a resource's service: what a caller may read of its records. */
export interface ReadScopeSource {
  readonly resource: ResolvedResource
  readScope(caller: ResourceParams): Promise<Filter | undefined>
  /** Of the records `filter` reaches, how many there are and how many the caller may remove. */
  removableReach(caller: ResourceParams, filter: Filter): Promise<{ all: number; removable: number }>
}

export interface ResourceStoreOptions {
  Model: Knex
  limits: Readonly<Required<QueryLimits>>
  /** On better-sqlite3, run compiled reads on statements prepared once per connection (default true). */
  reuseStatements?: boolean
  /**
   * The service of a resource, by name (this one's too): relation filters and many-to-many reads ask it what
   * the caller may read of its records.
   */
  related: (name: string) => ReadScopeSource | undefined
  /**
   * The application's write generation: counts are reused while it stands still (see `CountCache`);
   * undefined while they are not to be.
   */
  writeGeneration?: () => number | undefined
}

/** A page's total, and whether it is the planner's estimate rather than a count. */
export interface PageTotal {
  total: number
  estimated?: true
}

/**
 * One resource's table, without hooks: reads and writes for calls already scoped (`params.scope`), each
 * statement built by the query compiler; reads run compiled once per shape.
 */
export class ResourceStore {
  readonly Model: Knex
  readonly statements: ReadStatements
  readonly limits: Readonly<Required<QueryLimits>>
  private readonly runner: StatementRunner
  private readonly sqlByShape = new Map<string, string>()
  private readonly related: (name: string) => ReadScopeSource | undefined
  private readonly counts?: CountCache
  /** The row decoder of each projection, generated once. */
  private readonly decoders = new WeakMap<Projection, RowDecoder>()

  constructor(
    readonly resource: ResolvedResource,
    options: ResourceStoreOptions
  ) {
    this.Model = options.Model
    this.limits = options.limits
    this.related = options.related
    this.counts = options.writeGeneration && new CountCache(options.writeGeneration)
    const dialect = dialectOf(this.Model)
    this.statements = new ReadStatements(this.Model, resource, dialect)
    const preparedBytes = options.reuseStatements === false ? undefined : this.limits.preparedStatementBytes
    this.runner = new StatementRunner(dialect, this.limits.compiledStatementBytes, preparedBytes)
  }

  get target(): SqlTarget {
    return this.statements.target
  }

  /** The caller's transaction, the one the hook chain runs in, or the pool. */
  knex(params: ResourceParams): Knex {
    return params.transaction?.trx ?? ambientTransaction(this.Model) ?? this.Model
  }

  /** The resource's table on the call's connection. */
  table(params: ResourceParams = {}) {
    return this.knex(params)(this.resource.table)
  }

  /**
   * The SQL text of a shape's statement, for a live query's record of what it read (only then: building a
   * statement costs about as much as running a small one).
   */
  private sqlOf(shape: string, build: () => Knex.QueryBuilder): string {
    let sql = this.sqlByShape.get(shape)
    if (sql === undefined) {
      if (this.sqlByShape.size >= SQL_SHAPES_KEPT) this.sqlByShape.clear()
      sql = build().toSQL().sql
      this.sqlByShape.set(shape, sql)
    }
    return sql
  }

  /** Runs a statement compiled once per `shape` (see StatementRunner) on the call's connection. */
  run(
    params: ResourceParams,
    shape: string,
    values: readonly unknown[],
    build: (bound: readonly unknown[]) => Knex.QueryBuilder,
    integersFrom?: number
  ): Promise<ResourceRecord[]> {
    recordRead(this.resource.basePath, shape, values, () => this.sqlOf(shape, () => build(values)))
    return this.runner.run(this.knex(params), shape, values, build, integersFrom)
  }

  /**
   * The records a call may see: its scope ANDed with `filter`, checked and encoded; for a many-to-many read,
   * with the links it goes through. Relation filters first need the related resources' scopes for the caller.
   */
  async visible(params: ResourceParams, filter: Filter | undefined, link?: Link): Promise<ParsedFilter> {
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

  /**
   * What the caller may read of each resource joined to a statement (a `find` of it by the caller would see
   * just that), parsed on its own table: see `applyRelationJoins`.
   */
  async joinScopes(params: ResourceParams, resources: ResolvedResource[]): Promise<JoinScopes> {
    if (!resources.length) return NO_JOIN_SCOPES
    let caller: ResourceParams | undefined
    const parsed = await Promise.all(
      resources.map(async (resource) => {
        const scope = await this.relatedService(resource.name).readScope((caller ??= callerOf(params)))
        const own = { resource, dialect: this.target.dialect, table: resource.table }
        const pending = this.relationScopes(params, [[resource, scope]])
        return parseFilter(own, scope, this.limits, pending && (await pending))
      })
    )
    return joinScopes(parsed)
  }

  relatedService(name: string): ReadScopeSource {
    const service = this.related(name)
    if (!service) {
      throw new Error(`${this.resource.name}: no service of resource ${name} to ask what the caller may read`)
    }
    return service
  }

  /** The links a many-to-many read goes through: the join resource's records of the parents the caller may read. */
  async link(params: ResourceParams, through: LinkQuery): Promise<Link> {
    const joinService = this.related(through.resource)
    if (!joinService) throw badField('through.resource', `names no resource ("${through.resource}")`)
    const join = joinService.resource
    const foreignKey = join.fieldMap.get(through.foreignKey)
    const otherKey = join.fieldMap.get(through.otherKey)
    if (!foreignKey || !otherKey || foreignKey.computed || otherKey.computed) {
      throw badField(
        'through',
        `${join.name} has no fields "${through.foreignKey}" and "${through.otherKey}"`
      )
    }
    const parents: Filter = { [foreignKey.name]: { in: through.parents } }
    const scope = await joinService.readScope(callerOf(params))
    return {
      target: this.statements.linkTarget(join),
      foreignKey,
      otherKey,
      filter: andFilters(parents, scope)!
    }
  }

  decoder(fields: Projection) {
    let decode = this.decoders.get(fields)
    if (!decode) {
      decode = rowDecoder(fields.stored, fields.computed)
      this.decoders.set(fields, decode)
    }
    return decode
  }

  /**
   * An id as the database compares it. One that cannot be an id of this resource is a 400 naming it on the
   * plugin's routes (`params.queryModel`); for Feathers callers it finds no record, a 404, as Feathers'
   * database adapters answer.
   */
  idValue(id: Id, params: ResourceParams) {
    try {
      return encodeValue(this.resource.idField, id, 'id')
    } catch (error) {
      if (error instanceof BadRequest && !params.queryModel) throw notFound(this, id)
      throw error
    }
  }

  /** The record with this id the call may see (within `filter` too), or undefined. */
  async getRecord(id: Id, params: ResourceParams, filter?: Filter, fields = fullProjection(this.resource)) {
    const idValue = this.idValue(id, params)
    const visible = await this.visible(params, filter)
    const idAt = visible.values.length
    const shape = `get|${fields.key}|${visible.key}`
    const [row] = await this.run(params, shape, [...visible.values, idValue], (bound) => {
      const select = this.statements.select(this.table(params), visible, fields, bound)
      // A literal LIMIT: SQLite reads a record by id three times as fast without a bound one (docs/performance.md).
      return this.statements.whereIdIs(select, bound[idAt] as Knex.Value).limit(1, { skipBinding: true })
    })
    return row ? this.decoder(fields)(row) : undefined
  }

  /** How many records the filter reaches; reused from an earlier call while nothing was written since. */
  async count(params: ResourceParams, visible: ParsedFilter) {
    const read = async () => {
      const [row] = await this.run(params, `count|${visible.key}`, visible.values, (bound) =>
        this.statements.count(this.table(params), visible, bound)
      )
      return Number((row as { total: unknown }).total)
    }
    const key = this.countKey(params, visible)
    // A count kept from earlier runs no statement: a live query's computation must still know it read it.
    recordRead(this.resource.basePath, `count|${visible.key}`, visible.values, () =>
      this.sqlOf(`count|${visible.key}`, () =>
        this.statements.count(this.table(params), visible, visible.values)
      )
    )
    return key ? this.counts!.count(key, read) : read()
  }

  /** The count of `visible` kept from an earlier call, and how to keep one read with a page. */
  countReuse(params: ResourceParams, visible: ParsedFilter): { known?: number; keep(total: number): void } {
    const key = this.countKey(params, visible)
    return key ? this.counts!.reuse(key) : { keep: () => {} }
  }

  private countKey(params: ResourceParams, visible: ParsedFilter) {
    // A transaction sees its own writes, which no other caller may be answered with.
    if (!this.counts || this.knex(params) !== this.Model) return undefined
    return countKey(`count|${visible.key}`, visible.values)
  }

  /**
   * A page's total by the resource's `countStrategy`: the exact count, or the planner's estimate of the rows
   * the filter reaches (`planned`; `estimated` above `exactCountBelow` only), flagged as one. A database
   * without estimates counts.
   */
  async pageTotal(params: ResourceParams, visible: ParsedFilter): Promise<PageTotal> {
    const { countStrategy, exactCountBelow } = this.resource.query
    const { plannedRows } = this.target.dialect
    if (countStrategy === 'exact' || !plannedRows) return { total: await this.count(params, visible) }
    const select = this.statements.whereVisible(this.table(params), visible, visible.values).select(1)
    const planned = await runQuery(plannedRows(this.knex(params), select))
    if (planned === undefined || (countStrategy === 'estimated' && planned < exactCountBelow)) {
      return { total: await this.count(params, visible) }
    }
    return { total: planned, estimated: true }
  }

  /** The client's sorting, or the resource's defaultSort when the client asks for none. */
  sortingOf(query: ResourceQuery) {
    return query.sorting?.length ? query.sorting : this.resource.query.defaultSort
  }

  /** better-sqlite3 runs each statement on the event loop: while it reads, the server answers nobody. */
  get readsSynchronously() {
    return betterSqliteClient(this.Model) !== undefined
  }

  /**
   * Whether a page's count runs beside it: not on better-sqlite3, which answers one statement at a time on
   * the event loop anyway, not on a pool of one connection (as SQLite's are), and not inside a transaction,
   * whose one connection runs statements in turn.
   */
  countsAlongside(params: ResourceParams) {
    const pool = (this.Model.client as { pool?: { max?: number } }).pool
    // `knex(params)` is the pool itself only outside a transaction.
    return !this.readsSynchronously && (pool?.max ?? 2) > 1 && this.knex(params) === this.Model
  }
}
