import type { HookContext } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import type { ObjectSchema } from './json-schema'
import type { FieldRulesOption } from './field-rules-option'
import type { Filter, SortField } from '../model/query'

// Guards are ordinary Feathers hook functions; `any` keeps them assignable from any application type.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Guard = (
  context: HookContext<any, any>
) => void | HookContext<any, any> | Promise<void | HookContext<any, any>>
/* eslint-enable @typescript-eslint/no-explicit-any */

export type PagingStrategy = 'offset' | 'none'

/** GraphQL collections page by cursors (the default), by `limit`/`offset`, or not at all. */
export type GraphqlPagingStrategy = 'cursor' | PagingStrategy

export const PagingStrategies = { CURSOR: 'cursor', OFFSET: 'offset', NONE: 'none' } as const

/** How GraphQL pages a collection: a resource's root query, or a many-relation. */
export interface GraphqlPagingOptions {
  /**
   * `cursor` (default): a connection of edges with cursors, `paging: {first, after, last, before}`.
   * `offset`: `paging: {limit, offset}`, a connection of `nodes`. `none`: a plain list of every matching
   * record, up to `maxResultsSize` (more is an error, never a silently shorter list).
   */
  pagingStrategy?: GraphqlPagingStrategy
  /**
   * Cursor strategy only: cursors hold the record's sort values and id (keyset paging) instead of its
   * offset, so pages stay right while records are inserted and deleted and a deep page costs what the first
   * does. Such a cursor belongs to one sorting and filter; used with another it is a 400.
   */
  keyset?: boolean
}

export interface QueryOptions {
  /** ANDed into every collection request (list, export, GraphQL collections and aggregates). */
  defaultFilter?: Filter
  /** Server-side order, applied in list order; the id is always appended as the final tie-breaker. */
  defaultSort?: SortField[]
  /** REST collection shape: an offset connection (default) or a bare array of every record. */
  pagingStrategy?: PagingStrategy
  /** Page size when the client does not ask for one (REST 25, GraphQL 10 unless set). */
  defaultResultSize?: number
  /** Largest page a client may ask for (default 50). */
  maxResultsSize?: number
  /** Offer `totalCount` (REST: always returned; GraphQL: counted when selected). */
  enableTotalCount?: boolean
  /**
   * How a page's `totalCount` is counted: `exact` (default) with COUNT(*); `planned`, the database planner's
   * estimate of the rows the filter reaches (PostgreSQL, MySQL/MariaDB; exact on SQLite, which has none);
   * `estimated`, exact while the planner expects fewer than `exactCountBelow` rows, else the estimate.
   * An estimated total is flagged (`totalCountIsEstimate`).
   */
  countStrategy?: CountStrategy
  /** With `countStrategy: 'estimated'`: below this many planned rows, the count is exact (default 10,000). */
  exactCountBelow?: number
  /** Accept the free-form `query` parameter, which a hook must translate into a filter. */
  enableSearch?: boolean
  /** Remove the generated equality filter parameters from the REST list endpoint. */
  disableFilter?: boolean
}

export type CountStrategy = 'exact' | 'planned' | 'estimated'

export interface EndpointOptions {
  /** Route below the base path, e.g. `:id` (default) or `:id/archive`. */
  path?: string
  /** Feathers hooks run before the service method, e.g. `authenticate('jwt')`. */
  guards?: Guard[]
  /** Text for the API description. */
  description?: string
}

export interface ReadOptions {
  guards?: Guard[]
  /** Paging strategy of the REST list endpoint, overriding the query options. */
  pagingStrategy?: PagingStrategy
  description?: string
}

export interface CreateOptions {
  disabled?: boolean
  /** Replaces the generated create body schema. */
  schema?: ObjectSchema
  guards?: Guard[]
  description?: string
}

export interface UpdateOptions {
  disabled?: boolean
  /**
   * What `update` (and so `PUT`, on every transport) means for this resource: by default a partial update
   * like `patch`, as the spec's PUT is; with `replace` a full replace as in Feathers' adapters (the body follows
   * the create schema and writable fields it leaves out become null).
   */
  replace?: boolean
  /** Replaces the generated (partial) update body schema. */
  schema?: ObjectSchema
  one?: EndpointOptions
}

export interface DeleteOptions {
  disabled?: boolean
  /** Mark records deleted (a timestamp in `softDeleteColumn`) instead of removing the row. */
  useSoftDelete?: boolean
  /** Column holding the deletion timestamp (default `deletedAt`). */
  softDeleteColumn?: string
  one?: EndpointOptions
}

export interface ManyRelationDefinition extends GraphqlPagingOptions {
  /** Name of the related resource. */
  resource: string
  /** One-to-many: the field of the related resource that holds this resource's id. */
  foreignKey?: string
  /** Many-to-many instead: the join resource whose records link the two (see JoinDefinition). */
  through?: JoinDefinition
  /** Set to false to keep this relation out of aggregate queries when the resource enables them. */
  enableAggregate?: boolean
  /**
   * Clients may filter this resource's records by the relation (`{ subTasks: { completed: { is: false } } }`:
   * those with at least one related record matching), as nestjs-query's `@FilterableRelation`. Off by default.
   */
  filterable?: boolean
  /**
   * One-to-many: what removing a record of this resource does when related records reference it, which the
   * database may remove with it (`ON DELETE CASCADE`). `'refuse-hidden'` (the default, where the related
   * resource has `authorize`): the remove is a 403 while any of them is one the caller may not remove
   * itself, so that no user's remove takes another user's records. `'allow'`: the database's rule decides.
   */
  onDelete?: 'refuse-hidden' | 'allow'
}

/**
 * The join resource of a many-to-many relation (e.g. TodoItemTag for TodoItem.tags): an ordinary resource,
 * so that linking and unlinking are its create and remove, with its guards, hooks, authorize and events.
 */
export interface JoinDefinition {
  /** Name of the join resource. */
  resource: string
  /** Its field holding this resource's id. */
  foreignKey: string
  /** Its field holding the related resource's id. */
  otherKey: string
}

export interface OneRelationDefinition {
  resource: string
  /** Field of this resource that holds the related resource's id. */
  foreignKey: string
  nullable?: boolean
  /** Clients may filter this resource's records by the related record's fields. Off by default. */
  filterable?: boolean
}

/**
 * How the CSV export writes date-times: `iso`, ISO 8601 in UTC with milliseconds (`2026-09-20T12:30:00.000Z`),
 * or `spreadsheet`, `2026-09-20 12:30:00` in UTC to the second, which Excel, LibreOffice and Google Sheets
 * read as a date-time rather than as text.
 */
export type ExportDateFormat = 'iso' | 'spreadsheet'

export interface ExportOptions {
  disabled?: boolean
  /** Stop after this many rows (no cap by default). */
  maxRows?: number
  /**
   * Start the CSV with a UTF-8 byte order mark, without which Excel reads it in the system's legacy code page
   * (default false; a request overrides it with `?bom=true` or `?bom=false`).
   */
  bom?: boolean
  /** How the CSV writes date-times (default `iso`; a request overrides it with `?dateFormat=`). */
  dateFormat?: ExportDateFormat
  /** Rows read per statement (default 1000). */
  batchSize?: number
  /**
   * On SQLite (better-sqlite3 reads on the event loop), a batch whose read takes longer makes the next one
   * half as large, so that other requests wait no longer than this for one export (default 50 ms).
   */
  maxBatchMilliseconds?: number
  description?: string
}

/**
 * `POST /{basePath}/import` and the service's `import` method: CSV or NDJSON records created one by one as
 * `create` would (hooks, validation, `authorize`), a batch per transaction.
 */
export interface ImportOptions {
  disabled?: boolean
  /** Lines per transaction (default 500): what a resumed import skips in whole, and what a cut loses. */
  batchSize?: number
  /** The largest body, in bytes after decompression (default 1 GiB); more is a 413. */
  maxBytes?: number
  /** The most records one import reads (default 10,000,000); more is a 413. */
  maxRows?: number
  /** The longest line (a CSV record, an NDJSON line), in bytes (default 1 MiB); longer is a 400. */
  maxLineBytes?: number
  /** At most this many records created per second by one import (no cap by default). */
  maxRowsPerSecond?: number
  /** Line errors a report lists (default 1000); the counts go on. */
  maxErrors?: number
  /**
   * How far `POST /{basePath}/import` reads the upload ahead of the writes, into a temporary file (default
   * 256 MiB; 0: no further than the writes). The upload then arrives at the network's pace, within Node's
   * `server.requestTimeout`, however long the writes take.
   */
  readAheadBytes?: number
  description?: string
}

/**
 * Optimistic concurrency: a version per record, so that a write made against an old copy is refused (412)
 * rather than silently overwriting a change the writer never saw.
 */
export interface ConcurrencyOptions {
  /**
   * An integer field of the schema, `readOnly` (clients never write it), that the plugin sets to 1 on create
   * and adds 1 to on every update and patch. It is the record's `ETag` and what `If-Match` is checked against.
   */
  version: string
  /** Single-record update, patch and remove from clients must say which version they change (428 without). */
  required?: boolean
}

/**
 * Upsert: a record is created, or the one holding the same key is changed, in one race-free statement
 * (`service.upsert`, REST's `Prefer: resolution=merge-duplicates`, GraphQL's `upsertOne`/`upsertMany`).
 */
export interface UpsertOptions {
  /**
   * The fields that identify a record, e.g. `['email']`: a unique index of the table must span exactly their
   * columns (the migration generator adds it). Each must be a stored field clients may write.
   */
  key: string[]
  /** Text for the API description. */
  description?: string
}

/** The resource's own answer to conditional reads (`ETag`, `If-None-Match`), over the app's `caching`. */
export interface ResourceCachingOptions {
  /**
   * Tags and 304s on the resource's REST reads (default: the application's); `false` also leaves every
   * GraphQL GET untagged, as any document may read the resource through a relation.
   */
  enabled?: boolean
  /** The `Cache-Control` of the resource's tagged REST reads (default: the application's). */
  cacheControl?: string
}

export interface AggregateOptions {
  /** The root aggregate query without relation aggregates (`enableAggregate` turns on both). */
  enabled?: boolean
  /**
   * Most groups one aggregate statement may answer (default 1,000); more is a 400 naming `groupBy`. A
   * relation aggregate counts the entries of all the parents it loads at once.
   */
  maxGroups?: number
  /** Most buckets a zero-filled date series may have (`fill`; default 10,000); more is a 400. */
  maxFillBuckets?: number
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Authorize = (context: HookContext<any, any>) => Filter | undefined | Promise<Filter | undefined>

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ComputedField = (record: any) => unknown

/** What a SQL-computed field's expression is built with, once per database and table alias. */
export interface SqlFieldContext {
  knex: Knex
  /** The database, for expressions that differ (MySQL concatenates with CONCAT, the others with `||`). */
  dialect: 'sqlite' | 'mysql' | 'postgres'
  /** The resource's table or alias in the statement, quoted for the database: safe to write into SQL. */
  table: string
  /** A column of the resource's own row in the statement (`column('id')`), to bind with `?` in `knex.raw`. */
  column(name: string): Knex.Ref<string, Record<string, string>>
}

/**
 * A field computed by the database: a SQL expression over the resource's row (a correlated count, a
 * concatenation), selected, filtered, sorted and aggregated like a column. It is built from configuration
 * only, never from a request, and is read-only.
 */
export type SqlComputedField = (sql: SqlFieldContext) => Knex.Raw

/**
 * A resource: its schema and options. `defineResource` fills in the type parameters after `S` with the names
 * of the computed fields and relations, which the types of its records and queries need (typed-records.ts).
 */
export interface ResourceDefinition<
  S extends ObjectSchema = ObjectSchema,
  Computed extends string = string,
  SqlComputed extends string = string,
  ManyRelation extends string = string,
  OneRelation extends string = string
> {
  /** GraphQL object name, e.g. `TodoItem`. */
  name: string
  schema: S
  /** Database table (default: snake_case plural of the name). */
  table?: string
  /** REST base path (default: kebab-case plural of the name). */
  basePath?: string
  query?: QueryOptions
  read?: ReadOptions
  create?: CreateOptions
  update?: UpdateOptions
  delete?: DeleteOptions
  export?: ExportOptions
  /** Bulk creates from CSV or NDJSON ([import](../guide/import.md)). */
  import?: ImportOptions
  /** Conditional reads of the resource's REST routes (see the application's `caching`). */
  caching?: ResourceCachingOptions
  /** Upsert by a unique key (needs create and update enabled). */
  upsert?: UpsertOptions
  /** Optimistic concurrency through a version field (`ETag`, `If-Match`, GraphQL `version`). */
  concurrency?: ConcurrencyOptions
  /**
   * Which methods may change several records in one call, as Feathers' adapters' `multi` option: `true` for
   * create, patch and remove, or a list of them. Off by default. Each such call is one transaction.
   */
  multi?: boolean | Array<'create' | 'patch' | 'remove'>
  /** The most records one multi create, patch or remove may change (default 100); more is a 400. */
  maxMulti?: number
  /**
   * Custom events the service sends besides created, updated, patched and removed (`service.emit(name, data)`),
   * published through the application's channels like those, as Feathers' `events` service option.
   */
  events?: string[]
  /** Guards for every endpoint of the resource. */
  guards?: Guard[]
  many?: Record<ManyRelation, ManyRelationDefinition>
  one?: Record<OneRelation, OneRelationDefinition>
  /** How the GraphQL root query pages the resource's records (relations say so themselves). */
  graphql?: GraphqlPagingOptions
  /** Aggregate queries on the root type and on every many-relation. */
  enableAggregate?: boolean
  /** Aggregate query on the root type only (`enabled`), and the limit of every aggregate of the resource. */
  aggregate?: AggregateOptions
  /**
   * Record-level access rule, called with the hook context of every call (after the guards and body
   * validation; `context.method` says which). Returns a filter ANDed into every statement of the call
   * (undefined: no restriction) or throws to deny. For create, the inserted record must match it.
   * A comparison missing its value (`{eq: user?.id}` without a user) or an empty `or` matches nothing.
   */
  authorize?: Authorize
  /**
   * Field-level access per call from a client: `(params) => ({ salary: false, email: { read: false } })`.
   * Called after the call's hooks; `false` takes every use of a field away, `{ read: false }` leaves it
   * filterOnly for this caller, and `filter`, `sort`, `groupBy`, `aggregate` take one use away. A field the
   * caller may not read is left out of every answer and event it gets; using a field the rule takes away is
   * a 400 naming it. Server code's own calls (no `params.provider`) are not ruled.
   */
  fieldRules?: FieldRulesOption<keyof S['properties'] & string>
  /** Values of `Field`s that are not stored but computed from the record when it is read. */
  computed?: Record<Computed, ComputedField>
  /**
   * Fields the database computes with a SQL expression, e.g. `subTasksCount: ({ knex, column }) =>
   * knex.raw('(SELECT COUNT(*) FROM ?? WHERE ?? = ?)', ['sub_tasks', 'sub_tasks.todoItemId', column('id')])`.
   * Declared `FilterableField` they can be filtered, sorted and aggregated; they are never written.
   */
  sqlComputed?: Record<SqlComputed, SqlComputedField>
}

/**
 * Identity helper that keeps the schema's type and the names of computed fields and relations, which
 * `ResourceService<typeof resource>` and `ResourceClientService<typeof resource>` type records and queries by.
 */
export function defineResource<
  S extends ObjectSchema,
  Computed extends string = never,
  SqlComputed extends string = never,
  ManyRelation extends string = never,
  OneRelation extends string = never
>(
  definition: ResourceDefinition<S, Computed, SqlComputed, ManyRelation, OneRelation>
): ResourceDefinition<S, Computed, SqlComputed, ManyRelation, OneRelation> {
  return definition
}
