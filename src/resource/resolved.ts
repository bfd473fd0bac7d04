import type { TSchema } from '@sinclair/typebox'
import type { FieldRole } from './annotations'
import type {
  ComputedField,
  CountStrategy,
  ExportDateFormat,
  GraphqlPagingStrategy,
  PagingStrategy,
  ResourceDefinition,
  SqlComputedField
} from './definition'
import type { FieldKind } from './field-kind'
import type { Filter, SortField } from '../model/query'

/** A field of a resolved resource: its annotation and schema read once. */
export interface ResolvedField {
  name: string
  /** Database column; the property name, as the Feathers knex adapter does. */
  column: string
  kind: FieldKind
  role: FieldRole
  schema: TSchema
  description?: string
  nullable: boolean
  /** Exposed in filters, sorting and aggregates. */
  filterable: boolean
  filterRequired: boolean
  /** Filtered and sorted on, never read back: left out of records and of aggregates' values and groups. */
  filterOnly: boolean
  /** Part of serialized records (REST, CSV, GraphQL object type). */
  serialized: boolean
  /** Stored for the server's own use (audit columns): neither serialized nor writable by clients. */
  hidden: boolean
  /** Offered as an aggregate groupBy key. */
  groupable: boolean
  /** Not stored: computed when a record is read. */
  computed?: ComputedField
  /** Not stored: computed by the database (see `query/sql-fields`); read-only. */
  expression?: SqlComputedField
}

export interface ResolvedQueryOptions {
  defaultFilter?: Filter
  defaultSort: SortField[]
  pagingStrategy: PagingStrategy
  /** `undefined` lets each surface apply its own default (REST 25, GraphQL 10). */
  defaultResultSize?: number
  maxResultsSize: number
  enableTotalCount: boolean
  countStrategy: CountStrategy
  exactCountBelow: number
  enableSearch: boolean
  disableFilter: boolean
}

/** How GraphQL pages a collection (see `GraphqlPagingOptions`). */
export interface ResolvedPaging {
  strategy: GraphqlPagingStrategy
  keyset: boolean
}

interface ManyRelationBase {
  kind: 'many'
  name: string
  paging: ResolvedPaging
  /** Filled in once every resource is known. */
  target: ResolvedResource
  aggregate: boolean
  /** Clients may filter by it. */
  filterable: boolean
}

/** One-to-many: the target's foreign key holds this resource's id. */
export interface ResolvedHasManyRelation extends ManyRelationBase {
  /** Field of the target holding this resource's id. */
  foreignKey: ResolvedField
  through?: undefined
  /** Whether removing a parent is refused while it has related records the caller may not remove. */
  refuseHiddenOnDelete: boolean
}

/** Many-to-many: records of a join resource link this resource's records and the target's. */
export interface ResolvedManyToManyRelation extends ManyRelationBase {
  foreignKey?: undefined
  through: ResolvedJoin
}

export type ResolvedManyRelation = ResolvedHasManyRelation | ResolvedManyToManyRelation

export interface ResolvedJoin {
  /** The join resource, whose records are the links. */
  resource: ResolvedResource
  /** Its field holding this resource's id. */
  foreignKey: ResolvedField
  /** Its field holding the target's id. */
  otherKey: ResolvedField
}

export interface ResolvedOneRelation {
  kind: 'one'
  name: string
  target: ResolvedResource
  /** Field of this resource holding the target's id. */
  foreignKey: ResolvedField
  nullable: boolean
  filterable: boolean
}

export type ResolvedRelation = ResolvedManyRelation | ResolvedOneRelation

export interface ResolvedResource {
  definition: ResourceDefinition
  name: string
  /** lowerCamel name used for GraphQL queries (`todoItem`, `todoItems`). */
  singular: string
  plural: string
  table: string
  basePath: string
  idField: ResolvedField
  fields: ResolvedField[]
  fieldMap: Map<string, ResolvedField>
  query: ResolvedQueryOptions
  softDeleteColumn?: string
  /** With `concurrency`: the field holding each record's version, and whether clients must name one. */
  version?: { field: ResolvedField; required: boolean }
  /** With `upsert`: the fields of the unique key an upsert finds an existing record by. */
  upsertKey?: ResolvedField[]
  many: ResolvedManyRelation[]
  one: ResolvedOneRelation[]
  /** Every relation by name. */
  relationMap: Map<string, ResolvedRelation>
  aggregateEnabled: boolean
  /** How the GraphQL root query pages. */
  graphqlPaging: ResolvedPaging
  /** How the CSV export reads: `export.batchSize` and `export.maxBatchMilliseconds` with their defaults. */
  exportBatches: ReadBatches
  /** How the CSV export writes: `export.bom` and `export.dateFormat` with their defaults. */
  exportCsv: CsvSettings
  /** How imports write and what one may hold: `import.*` with their defaults. */
  importSettings: ImportSettings
  /** Most groups one aggregate statement on this resource may answer. */
  maxAggregateGroups: number
  /** Most buckets of a zero-filled date series. */
  maxFillBuckets: number
}

export interface CsvSettings {
  /** Start with a UTF-8 byte order mark. */
  bom: boolean
  dateFormat: ExportDateFormat
}

export interface ImportSettings {
  batchSize: number
  maxBytes: number
  maxRows: number
  maxLineBytes: number
  /** Infinity without a cap. */
  maxRowsPerSecond: number
  maxErrors: number
  readAheadBytes: number
}

export interface ReadBatches {
  /** Rows read per statement at most. */
  size: number
  /** On a driver that reads synchronously, a read taking longer than this makes the next batch smaller. */
  maxMilliseconds: number
}

export interface PageSizes {
  /** Page size when the client asks for none. */
  default: number
  /** Largest page a client may ask for. */
  max: number
}

/**
 * A resource's page sizes on a surface whose own default page size is `surfaceDefault` (REST 25, GraphQL
 * 10): `defaultResultSize` when configured, else the surface default, never above `maxResultsSize`.
 */
export function pageSizes(resource: ResolvedResource, surfaceDefault: number): PageSizes {
  const max = resource.query.maxResultsSize
  return { max, default: resource.query.defaultResultSize ?? Math.min(surfaceDefault, max) }
}

/** The fields a statement reads from the database: stored columns and SQL-computed fields. */
export function storedFields(resource: ResolvedResource) {
  return resource.fields.filter((field) => !field.computed)
}

export function serializedFields(resource: ResolvedResource) {
  return resource.fields.filter((field) => field.serialized)
}

export function filterableFields(resource: ResolvedResource) {
  return resource.fields.filter((field) => field.filterable)
}
