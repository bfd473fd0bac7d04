import type { TSchema } from '@sinclair/typebox'
import { ConfigurationError } from '../common/errors'
import { DEFAULTS } from './defaults'
import { readAnnotation } from './annotations'
import type {
  ExportDateFormat,
  GraphqlPagingOptions,
  GraphqlPagingStrategy,
  ManyRelationDefinition,
  OneRelationDefinition,
  ResourceDefinition,
  SqlComputedField
} from './definition'
import { fieldKindOf } from './field-kind'
import { kebabCase, lowerFirst, pluralize, snakeCase } from './naming'
import { checkQuantifiedKeys } from './relation-quantifiers'
import type {
  CsvSettings,
  ImportSettings,
  ReadBatches,
  ResolvedField,
  ResolvedManyRelation,
  ResolvedOneRelation,
  ResolvedPaging,
  ResolvedQueryOptions,
  ResolvedResource
} from './resolved'

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

/** The version field `concurrency` names: an integer the plugin alone writes. */
function resolveVersion(definition: ResourceDefinition, fields: ResolvedField[]) {
  const options = definition.concurrency
  if (!options) return undefined
  const where = `${definition.name}.concurrency.version`
  const field = fields.find((candidate) => candidate.name === options.version)
  if (!field) throw new ConfigurationError(`${where}: "${options.version}" is not a field of the schema`)
  if (field.kind !== 'integer' || field.computed || field.expression || field.role === 'id') {
    throw new ConfigurationError(`${where}: ${field.name} must be a stored integer field`)
  }
  if ((field.schema as { readOnly?: boolean }).readOnly !== true) {
    throw new ConfigurationError(`${where}: ${field.name} must be readOnly, since the plugin alone writes it`)
  }
  return { field, required: options.required === true }
}

/** The key `upsert` names: stored fields clients write, on a resource that creates and updates. */
function resolveUpsertKey(definition: ResourceDefinition, fields: ResolvedField[]) {
  const options = definition.upsert
  if (options === undefined) return undefined
  const where = `${definition.name}.upsert.key`
  const key: unknown = options?.key
  if (!Array.isArray(key) || key.length === 0 || !key.every((name) => typeof name === 'string')) {
    throw new ConfigurationError(`${where} must be a non-empty array of field names, e.g. ['email']`)
  }
  if (new Set(key).size !== key.length) throw new ConfigurationError(`${where} names a field twice`)
  if (definition.create?.disabled || definition.update?.disabled) {
    throw new ConfigurationError(`${definition.name}.upsert creates and updates: enable create and update`)
  }
  return (key as string[]).map((name) => {
    const field = fields.find((candidate) => candidate.name === name)
    if (!field) throw new ConfigurationError(`${where}: "${name}" is not a field of the schema`)
    const stored = !field.computed && !field.expression
    if (!stored || field.hidden || (field.schema as { readOnly?: boolean }).readOnly === true) {
      throw new ConfigurationError(
        `${where}: ${name} must be a stored field clients write (not computed, hidden or readOnly)`
      )
    }
    return field
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
    ...countStrategyOf(definition),
    enableSearch: query.enableSearch === true,
    disableFilter: query.disableFilter === true
  }
}

const COUNT_STRATEGIES = ['exact', 'planned', 'estimated']

function countStrategyOf(definition: ResourceDefinition) {
  const { countStrategy = 'exact', exactCountBelow = DEFAULTS.exactCountBelow } = definition.query ?? {}
  if (!COUNT_STRATEGIES.includes(countStrategy)) {
    throw new ConfigurationError(
      `${definition.name}: query.countStrategy must be one of ${COUNT_STRATEGIES.join(', ')}`
    )
  }
  positiveInteger(definition, 'query.exactCountBelow', exactCountBelow)
  return { countStrategy, exactCountBelow }
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

const EXPORT_DATE_FORMATS: ExportDateFormat[] = ['iso', 'spreadsheet']

function resolveImportSettings(definition: ResourceDefinition): ImportSettings {
  const given = definition.import ?? {}
  const setting = (name: Exclude<keyof typeof DEFAULTS.import, 'readAheadBytes'>) =>
    positiveInteger(definition, `import.${name}`, given[name] ?? DEFAULTS.import[name])
  const { maxRowsPerSecond, readAheadBytes = DEFAULTS.import.readAheadBytes } = given
  if (!Number.isInteger(readAheadBytes) || readAheadBytes < 0) {
    throw new ConfigurationError(`${definition.name}: import.readAheadBytes must be an integer of 0 or more`)
  }
  if (maxRowsPerSecond !== undefined && !(maxRowsPerSecond > 0)) {
    throw new ConfigurationError(`${definition.name}: import.maxRowsPerSecond must be a positive number`)
  }
  return {
    batchSize: setting('batchSize'),
    maxBytes: setting('maxBytes'),
    maxRows: setting('maxRows'),
    maxLineBytes: setting('maxLineBytes'),
    maxErrors: setting('maxErrors'),
    maxRowsPerSecond: maxRowsPerSecond ?? Infinity,
    readAheadBytes
  }
}

function resolveExportCsv(definition: ResourceDefinition): CsvSettings {
  const { bom = DEFAULTS.exportCsv.bom, dateFormat = DEFAULTS.exportCsv.dateFormat } = definition.export ?? {}
  if (typeof bom !== 'boolean') {
    throw new ConfigurationError(`${definition.name}: export.bom must be a boolean`)
  }
  if (!EXPORT_DATE_FORMATS.includes(dateFormat)) {
    throw new ConfigurationError(
      `${definition.name}: export.dateFormat must be ${EXPORT_DATE_FORMATS.join(' or ')}, not ${String(dateFormat)}`
    )
  }
  return { bom, dateFormat }
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
    version: resolveVersion(definition, fields),
    upsertKey: resolveUpsertKey(definition, fields),
    many: [],
    one: [],
    relationMap: new Map(),
    aggregateEnabled: definition.enableAggregate === true || definition.aggregate?.enabled === true,
    graphqlPaging: resolvePaging(definition.graphql, `${definition.name}.graphql`),
    exportBatches: resolveExportBatches(definition),
    exportCsv: resolveExportCsv(definition),
    importSettings: resolveImportSettings(definition),
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
  if (field.computed)
    throw new ConfigurationError(`${resource.name}: ${where} names computed field "${name}"`)
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
    const known = [...byName.keys()].sort().join(', ')
    throw new ConfigurationError(
      `${resource.name}.${name} relates to unknown resource "${relation.resource}": no feathersQuery() ` +
        `call registered it (registered: ${known}). Register "${relation.resource}" with ` +
        `app.configure(feathersQuery({ Model, resources: [...] })) in its service file, or correct the name.`
    )
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
    const onDelete = relation.onDelete ?? 'refuse-hidden'
    if (onDelete !== 'refuse-hidden' && onDelete !== 'allow') {
      throw new ConfigurationError(`${where}: onDelete must be 'refuse-hidden' or 'allow'`)
    }
    return {
      ...common,
      foreignKey: foreignKeyField(target, relation.foreignKey, where),
      refuseHiddenOnDelete: onDelete === 'refuse-hidden' && target.definition.authorize !== undefined
    }
  }
  // ...or both keys are on the join resource.
  if (relation.onDelete !== undefined) {
    throw new ConfigurationError(`${where}: onDelete applies to one-to-many relations (foreignKey) only`)
  }
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

/**
 * Resolves the resources of one registration, each on its own: every mistake within a definition is reported
 * here, when it is registered. Their relations are linked by `linkResources`, once every registration is in.
 */
export function resolveDefinitions(definitions: ResourceDefinition[]): ResolvedResource[] {
  if (!Array.isArray(definitions)) {
    throw new ConfigurationError('feathersQuery({ resources }) takes an array of resource definitions')
  }
  return definitions.map(resolveResource)
}

/**
 * Links the relations of every registered resource (of every registration, once all are in) and checks
 * them. A relation to a resource no registration holds is a start-up error saying what to do.
 */
export function linkResources(resources: ResolvedResource[]): void {
  const byName = new Map(resources.map((resource) => [resource.name, resource]))
  for (const resource of resources) {
    const { many = {}, one = {} } = resource.definition
    for (const name of [...Object.keys(many), ...Object.keys(one)]) {
      if (resource.fieldMap.has(name)) {
        throw new ConfigurationError(`${resource.name}.${name} is both a field and a relation`)
      }
    }
    resource.many = Object.entries(many).map(([name, relation]) => linkMany(resource, name, relation, byName))
    for (const relation of resource.many) {
      if (relation.paging.keyset)
        checkKeysetOrder(relation.target, `relation ${resource.name}.${relation.name}`)
    }
    resource.one = Object.entries(one).map(([name, relation]) => linkOne(resource, name, relation, byName))
    resource.relationMap = new Map(
      [...resource.many, ...resource.one].map((relation) => [relation.name, relation])
    )
    checkQuantifiedKeys(resource)
  }
}

/**
 * Feathers' `paginate` (the application's, or a registration's own) as the page sizes of a resource that
 * sets none of its own: `query.defaultResultSize` and `query.maxResultsSize` win where given.
 */
export function applyPaginate(resource: ResolvedResource, paginate: { default?: number; max?: number } = {}) {
  const own = resource.definition.query ?? {}
  if (own.maxResultsSize === undefined && paginate.max !== undefined) {
    resource.query.maxResultsSize = paginate.max
    if (own.defaultResultSize !== undefined && own.defaultResultSize > paginate.max) {
      throw new ConfigurationError(
        `${resource.name}: query.defaultResultSize ${own.defaultResultSize} is larger than paginate.max ` +
          `${paginate.max}; set query.maxResultsSize too`
      )
    }
  }
  if (own.defaultResultSize === undefined && paginate.default !== undefined) {
    resource.query.defaultResultSize = Math.min(paginate.default, resource.query.maxResultsSize)
  }
}
