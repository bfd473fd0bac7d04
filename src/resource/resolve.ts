import type { TSchema } from '@sinclair/typebox'
import { ConfigurationError } from '../common/errors'
import { DEFAULTS } from './defaults'
import { readAnnotation, type FieldRole } from './annotations'
import type {
  ComputedField,
  GraphqlPagingOptions,
  GraphqlPagingStrategy,
  ManyRelationDefinition,
  OneRelationDefinition,
  PagingStrategy,
  ResourceDefinition,
  SqlComputedField
} from './definition'
import { fieldKindOf, type FieldKind } from './field-kind'
import { kebabCase, lowerFirst, pluralize, snakeCase } from './naming'
import type { Filter, SortField } from '../model/query'

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
  many: ResolvedManyRelation[]
  one: ResolvedOneRelation[]
  /** Every relation by name. */
  relationMap: Map<string, ResolvedRelation>
  aggregateEnabled: boolean
  /** How the GraphQL root query pages. */
  graphqlPaging: ResolvedPaging
  /** How the CSV export reads: `export.batchSize` and `export.maxBatchMilliseconds` with their defaults. */
  exportBatches: ReadBatches
  /** Most groups one aggregate statement on this resource may answer. */
  maxAggregateGroups: number
  /** Most buckets of a zero-filled date series. */
  maxFillBuckets: number
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

function resolveFields(definition: ResourceDefinition): ResolvedField[] {
  const schema = definition.schema
  const required = new Set(schema.required ?? [])
  const computed = definition.computed ?? {}
  const expressions: Partial<Record<string, SqlComputedField>> = definition.sqlComputed ?? {}

  return Object.entries(schema.properties).map(([name, property]) => {
    const annotation = readAnnotation(property)
    if (!annotation) {
      throw new ConfigurationError(
        `${definition.name}.${name} has no annotation: wrap its schema in IDField, FilterableField or Field`
      )
    }
    const kind = fieldKindOf(annotation.base)
    if (!kind) {
      throw new ConfigurationError(
        `${definition.name}.${name} has type ${JSON.stringify(annotation.base.type)}, ` +
          'but only string, date-time string, integer, number and boolean fields are supported'
      )
    }
    if (computed[name] && annotation.role !== 'plain') {
      throw new ConfigurationError(`${definition.name}.${name} is computed, so it must be a plain Field`)
    }
    const expression = expressions[name]
    if (expression && (computed[name] || annotation.role === 'id')) {
      throw new ConfigurationError(
        `${definition.name}.${name} is computed in SQL, so it is neither an IDField nor computed`
      )
    }
    if (expression !== undefined && typeof expression !== 'function') {
      throw new ConfigurationError(
        `${definition.name}: sqlComputed.${name} must be a function returning knex.raw`
      )
    }
    return {
      name,
      column: name,
      kind,
      role: annotation.role,
      // Whichever TypeBox built it, the plugin's TypeBox composes it with others by its JSON Schema keywords.
      // The database computes a SQL field's value: no client writes it, as the schema then says.
      schema: (expression ? { ...annotation.base, readOnly: true } : annotation.base) as TSchema,
      description: annotation.base.description,
      nullable: annotation.nullable || !required.has(name),
      filterable: annotation.role !== 'plain',
      filterRequired: annotation.filterRequired,
      filterOnly: annotation.filterOnly,
      serialized: !annotation.filterOnly && !annotation.hidden,
      hidden: annotation.hidden,
      groupable: annotation.groupBy,
      computed: computed[name],
      ...(expression ? { expression } : {})
    }
  })
}

function positiveInteger<T extends number | undefined>(
  definition: ResourceDefinition,
  option: string,
  value: T
): T {
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
    throw new ConfigurationError(`${definition.name}: ${option} must be a positive integer`)
  }
  return value
}

function resolveQueryOptions(definition: ResourceDefinition): ResolvedQueryOptions {
  const query = definition.query ?? {}
  const maxResultsSize = positiveInteger(
    definition,
    'query.maxResultsSize',
    query.maxResultsSize ?? DEFAULTS.maxResultsSize
  )
  positiveInteger(definition, 'query.defaultResultSize', query.defaultResultSize)
  if (query.defaultResultSize !== undefined && query.defaultResultSize > maxResultsSize) {
    throw new ConfigurationError(`${definition.name}: query.defaultResultSize is larger than maxResultsSize`)
  }
  return {
    defaultFilter: query.defaultFilter,
    defaultSort: query.defaultSort ?? [],
    pagingStrategy: query.pagingStrategy ?? 'offset',
    defaultResultSize: query.defaultResultSize,
    maxResultsSize,
    enableTotalCount: query.enableTotalCount === true,
    enableSearch: query.enableSearch === true,
    disableFilter: query.disableFilter === true
  }
}

function resolveExportBatches(definition: ResourceDefinition): ReadBatches {
  const { size, maxMilliseconds } = DEFAULTS.exportBatches
  const { batchSize = size, maxBatchMilliseconds = maxMilliseconds } = definition.export ?? {}
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new ConfigurationError(`${definition.name}: export.batchSize must be a positive integer`)
  }
  if (!(maxBatchMilliseconds > 0)) {
    throw new ConfigurationError(`${definition.name}: export.maxBatchMilliseconds must be a positive number`)
  }
  return { size: batchSize, maxMilliseconds: maxBatchMilliseconds }
}

const GRAPHQL_PAGING_STRATEGIES: GraphqlPagingStrategy[] = ['cursor', 'offset', 'none']

function resolvePaging(options: GraphqlPagingOptions = {}, where: string): ResolvedPaging {
  const { pagingStrategy: strategy = 'cursor', keyset = false } = options
  if (!GRAPHQL_PAGING_STRATEGIES.includes(strategy)) {
    const known = GRAPHQL_PAGING_STRATEGIES.join(', ')
    throw new ConfigurationError(`${where}: pagingStrategy must be one of ${known}`)
  }
  if (keyset && strategy !== 'cursor') {
    throw new ConfigurationError(`${where}: keyset cursors need the cursor paging strategy`)
  }
  return { strategy, keyset: keyset === true }
}

/** Resolves one definition on its own; relations are linked by `resolveResources`. */
function resolveResource(definition: ResourceDefinition): ResolvedResource {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(definition.name)) {
    throw new ConfigurationError(`Resource name "${definition.name}" must be PascalCase, e.g. TodoItem`)
  }
  const fields = resolveFields(definition)
  const ids = fields.filter((field) => field.role === 'id')
  if (ids.length !== 1) {
    throw new ConfigurationError(
      `${definition.name} must have exactly one IDField, found ${ids.length}` +
        (ids.length ? ` (${ids.map((field) => field.name).join(', ')})` : '')
    )
  }
  for (const option of ['computed', 'sqlComputed'] as const) {
    for (const name of Object.keys(definition[option] ?? {})) {
      if (!fields.some((field) => field.name === name)) {
        throw new ConfigurationError(`${definition.name}: ${option} field "${name}" is not in the schema`)
      }
    }
  }
  const resource: ResolvedResource = {
    definition,
    name: definition.name,
    singular: lowerFirst(definition.name),
    plural: lowerFirst(pluralize(definition.name)),
    table: definition.table ?? snakeCase(pluralize(definition.name)),
    basePath: (definition.basePath ?? kebabCase(pluralize(definition.name))).replace(/^\/+|\/+$/g, ''),
    idField: ids[0],
    fields,
    fieldMap: new Map(fields.map((field) => [field.name, field])),
    query: resolveQueryOptions(definition),
    softDeleteColumn: definition.delete?.useSoftDelete
      ? (definition.delete.softDeleteColumn ?? 'deletedAt')
      : undefined,
    many: [],
    one: [],
    relationMap: new Map(),
    aggregateEnabled: definition.enableAggregate === true || definition.aggregate?.enabled === true,
    graphqlPaging: resolvePaging(definition.graphql, `${definition.name}.graphql`),
    exportBatches: resolveExportBatches(definition),
    maxAggregateGroups: positiveInteger(
      definition,
      'aggregate.maxGroups',
      definition.aggregate?.maxGroups ?? DEFAULTS.maxAggregateGroups
    ),
    maxFillBuckets: positiveInteger(
      definition,
      'aggregate.maxFillBuckets',
      definition.aggregate?.maxFillBuckets ?? DEFAULTS.maxFillBuckets
    )
  }
  for (const sort of resource.query.defaultSort) {
    storedField(resource, sort.field, 'query.defaultSort')
  }
  if (resource.graphqlPaging.keyset) checkKeysetOrder(resource, `${resource.name}.graphql`)
  return resource
}

function storedField(resource: ResolvedResource, name: string, where: string): ResolvedField {
  const field = resource.fieldMap.get(name)
  if (!field) throw new ConfigurationError(`${resource.name}: ${where} names unknown field "${name}"`)
  if (field.computed) throw new ConfigurationError(`${resource.name}: ${where} names computed field "${name}"`)
  return field
}

/** Keyset cursors carry the sort values to clients: never those of a field that does not leave the server. */
function checkKeysetOrder(target: ResolvedResource, where: string) {
  const unserialized = target.query.defaultSort.find((sort) => !target.fieldMap.get(sort.field)?.serialized)
  if (!unserialized) return
  throw new ConfigurationError(
    `${where}: keyset cursors would carry ${target.name}.${unserialized.field} (defaultSort), which is not serialized`
  )
}

/** A relation's foreign key: a column relation writes set, so not one the database computes. */
function foreignKeyField(resource: ResolvedResource, name: string, where: string): ResolvedField {
  const field = storedField(resource, name, where)
  if (field.expression) {
    throw new ConfigurationError(`${resource.name}: ${where} names SQL-computed field "${name}"`)
  }
  return field
}

function relatedResource(
  resource: ResolvedResource,
  name: string,
  relation: { resource: string },
  byName: Map<string, ResolvedResource>
) {
  const target = byName.get(relation.resource)
  if (!target) {
    throw new ConfigurationError(`${resource.name}.${name} relates to unknown resource "${relation.resource}"`)
  }
  return target
}

function linkMany(
  resource: ResolvedResource,
  name: string,
  relation: ManyRelationDefinition,
  byName: Map<string, ResolvedResource>
): ResolvedManyRelation {
  const target = relatedResource(resource, name, relation, byName)
  const where = `relation ${resource.name}.${name}`
  const common = {
    kind: 'many' as const,
    name,
    paging: resolvePaging(relation, `relation ${resource.name}.${name}`),
    target,
    aggregate: resource.definition.enableAggregate === true && relation.enableAggregate !== false,
    filterable: relation.filterable === true
  }
  if ((relation.foreignKey === undefined) === (relation.through === undefined)) {
    throw new ConfigurationError(`${resource.name}.${name} needs either foreignKey or through (not both)`)
  }
  // The foreign key is on the related resource...
  if (relation.foreignKey !== undefined) {
    return { ...common, foreignKey: foreignKeyField(target, relation.foreignKey, where) }
  }
  // ...or both keys are on the join resource.
  const { through } = relation
  const join = relatedResource(resource, name, through!, byName)
  return {
    ...common,
    through: {
      resource: join,
      foreignKey: foreignKeyField(join, through!.foreignKey, `${where} through`),
      otherKey: foreignKeyField(join, through!.otherKey, `${where} through`)
    }
  }
}

function linkOne(
  resource: ResolvedResource,
  name: string,
  relation: OneRelationDefinition,
  byName: Map<string, ResolvedResource>
): ResolvedOneRelation {
  return {
    kind: 'one',
    name,
    target: relatedResource(resource, name, relation, byName),
    // ...and on this one for a one-relation.
    foreignKey: foreignKeyField(resource, relation.foreignKey, `relation ${resource.name}.${name}`),
    nullable: relation.nullable === true,
    filterable: relation.filterable === true
  }
}

/** Resolves and cross-checks a set of resources; every configuration mistake is reported here, at start-up. */
export function resolveResources(definitions: ResourceDefinition[]): ResolvedResource[] {
  const resources = definitions.map(resolveResource)
  const byName = new Map<string, ResolvedResource>()
  const byPath = new Map<string, ResolvedResource>()
  for (const resource of resources) {
    if (byName.has(resource.name)) throw new ConfigurationError(`Resource ${resource.name} is defined twice`)
    if (byPath.has(resource.basePath)) {
      throw new ConfigurationError(`${resource.name} and ${byPath.get(resource.basePath)!.name} share base path`)
    }
    byName.set(resource.name, resource)
    byPath.set(resource.basePath, resource)
  }
  for (const resource of resources) {
    const { many = {}, one = {} } = resource.definition
    for (const name of [...Object.keys(many), ...Object.keys(one)]) {
      if (resource.fieldMap.has(name)) {
        throw new ConfigurationError(`${resource.name}.${name} is both a field and a relation`)
      }
    }
    resource.many = Object.entries(many).map(([name, relation]) => linkMany(resource, name, relation, byName))
    for (const relation of resource.many) {
      if (relation.paging.keyset) checkKeysetOrder(relation.target, `relation ${resource.name}.${relation.name}`)
    }
    resource.one = Object.entries(one).map(([name, relation]) => linkOne(resource, name, relation, byName))
    resource.relationMap = new Map([...resource.many, ...resource.one].map((relation) => [relation.name, relation]))
  }
  return resources
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
