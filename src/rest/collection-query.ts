import { Type, type TSchema } from '@sinclair/typebox'
import type { FieldError } from '../common/errors'
import { encodeValue, parseNumber } from '../resource/codec'
import { filterableFields, pageSizes, type ResolvedField, type ResolvedResource } from '../resource/resolved'
import { REST_DEFAULT_RESULT_SIZE } from '../resource/defaults'
import { compileValidator } from '../resource/validator'
import type { Filter } from '../model/query'

export interface CollectionQueryOptions {
  /** Accept `limit` and `offset`. */
  paging: boolean
  /** Accept one equality parameter per filterable field. */
  filters: boolean
}

/**
 * The query-string type of a field's equality parameter: the field's own schema (so its bounds and patterns
 * hold here too), with strings converted to its type. A default belongs to bodies, not to filters.
 */
function parameterSchema(field: ResolvedField): TSchema {
  const { default: _default, readOnly: _readOnly, ...schema } = field.schema
  if (field.kind === 'date') return Type.String({ ...schema, format: 'date-time' })
  return schema as TSchema
}

/** The REST list endpoint's paging strategy: the read option wins over the query options. */
export function listPagingStrategy(resource: ResolvedResource) {
  return resource.definition.read?.pagingStrategy ?? resource.query.pagingStrategy
}

/** What the list endpoint's query string carries. */
export function listQueryOptions(resource: ResolvedResource): CollectionQueryOptions {
  return { paging: listPagingStrategy(resource) === 'offset', filters: !resource.query.disableFilter }
}

/** The export's query string: the filter parameters even with `disableFilter`, never paging. */
export const EXPORT_QUERY_OPTIONS: CollectionQueryOptions = { paging: false, filters: true }

/** The JSON schema of a collection endpoint's query string; also what the OpenAPI document describes. */
export function collectionQuerySchema(resource: ResolvedResource, options: CollectionQueryOptions) {
  const properties: Record<string, TSchema> = {}
  if (options.paging) {
    const sizes = pageSizes(resource, REST_DEFAULT_RESULT_SIZE)
    properties.limit = Type.Optional(
      Type.Integer({ minimum: 1, maximum: sizes.max, default: sizes.default, description: 'Page size' })
    )
    properties.offset = Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        default: 0,
        description: 'Number of records to skip'
      })
    )
  }
  if (options.filters) {
    for (const field of filterableFields(resource)) {
      const schema = parameterSchema(field)
      properties[field.name] = field.filterRequired ? schema : Type.Optional(schema)
    }
  }
  if (resource.query.enableSearch) {
    properties.query = Type.Optional(Type.String({ description: 'Free-form search text' }))
  }
  return Type.Object(properties, { additionalProperties: false })
}

export interface CollectionRequest {
  filter?: Filter
  paging?: { limit: number; offset: number }
  search?: string
}

/**
 * Validates a query string against the collection schema and turns it into the query model: each field
 * parameter becomes an `eq` comparison, ANDed with the others.
 */
export function collectionQueryParser(resource: ResolvedResource, options: CollectionQueryOptions) {
  const validate = compileValidator(collectionQuerySchema(resource, options), { coerce: true, what: 'Query' })
  const textual = new Set(
    resource.fields
      .filter((field) => field.kind === 'string')
      .map((field) => field.name)
      .concat('query')
  )
  const numeric = new Map<string, 'integer' | 'number'>([
    ['limit', 'integer'],
    ['offset', 'integer']
  ])
  for (const field of resource.fields) {
    if (field.kind === 'integer' || field.kind === 'number') numeric.set(field.name, field.kind)
  }
  /**
   * What Ajv's coercion would misread: an empty string as 0 or false (an empty number is a mistake, not
   * zero), and numbers as JavaScript reads them (`0x4`, `1e0`, ` 4`), where the codec's reading is the API's.
   */
  const misreading = (name: string, value: unknown) => {
    if (value === '' && !textual.has(name)) return 'must not be empty'
    const kind = numeric.get(name)
    if (!kind || typeof value !== 'string' || !Number.isNaN(parseNumber(kind, value))) return undefined
    return kind === 'integer' ? 'must be an integer' : 'must be a number'
  }
  // A search sent to a resource that takes none is most likely a search hook (`searchFields`) set up
  // without the option that lets the parameter through: the refusal says which option that is.
  const searchOff = !resource.query.enableSearch && !resource.fieldMap.has('query')
  const searchRefusal =
    `is not allowed: ${resource.name} takes no search; its resource definition sets ` +
    'query: { enableSearch: true } for a search hook (such as searchFields) to read it'
  return (raw: Record<string, unknown>): CollectionRequest => {
    const input: Record<string, unknown> = {}
    const misread: FieldError[] = []
    for (const [name, value] of Object.entries(raw)) {
      const message = searchOff && name === 'query' ? searchRefusal : misreading(name, value)
      if (message) misread.push({ field: name, message })
      else input[name] = value
    }
    const { limit, offset, query, ...fields } = validate(input, misread) as Record<string, unknown>
    const filter: Filter = {}
    for (const [name, value] of Object.entries(fields)) {
      // Checked here so that a value the database cannot take (e.g. 1e400) is named by its parameter.
      encodeValue(resource.fieldMap.get(name)!, value, name)
      filter[name] = { eq: value as string }
    }
    return {
      filter: Object.keys(filter).length ? filter : undefined,
      paging: options.paging ? { limit: limit as number, offset: offset as number } : undefined,
      search: query as string | undefined
    }
  }
}
