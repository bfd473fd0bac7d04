import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { ResolvedResource } from '../resource/resolved'
import { createSchemaOf, updateSchemaOf } from '../resource/input-schemas'
import { recordSchemaOf } from '../resource/record-schema'
import { serializedFields } from '../resource/resolved'
import { collectionQuerySchema, listPagingStrategy, listQueryOptions } from '../rest/collection-query'
import { deletePath, updatePath } from '../rest/router'
import { exportPath } from '../rest/export/route'
import { exportQuerySchema } from '../rest/export/export-query'
import { importPath } from '../rest/import-body'
import { aggregatePath } from '../rest/aggregate-route'
import { aggregateQuerySchema } from '../rest/aggregate-query'
import { AGGREGATE_FUNCTIONS } from '../model/aggregate'
import { allowsMulti, maxMultiOf } from '../service/multi'
import type { GuardedMethod } from '../authorization/guards'
import { errorResponsesOf, PAGE_INFO_SCHEMA, schemaRef, type ErrorResponseName } from './components'
import { operationSecurity } from './security'
import { omitKeywords, toOpenApiSchema } from './schema'
import type {
  HttpMethod,
  OperationObject,
  ParameterObject,
  PathItemObject,
  Reference,
  ResponseObject,
  SchemaObject
} from './types'

/** The component schema names of a resource. */
export function componentNames(resource: ResolvedResource) {
  const { name } = resource
  return { record: name, create: `${name}Create`, update: `${name}Update`, page: `${name}OffsetConnection` }
}

/** The components one resource contributes: its record, bodies and (offset paging) connection. */
export function resourceSchemas(resource: ResolvedResource): Record<string, SchemaObject> {
  const names = componentNames(resource)
  const schemas: Record<string, SchemaObject> = { [names.record]: toOpenApiSchema(recordSchemaOf(resource)) }
  if (!resource.definition.create?.disabled) schemas[names.create] = toOpenApiSchema(createSchemaOf(resource))
  if (!resource.definition.update?.disabled) schemas[names.update] = toOpenApiSchema(updateSchemaOf(resource))
  if (listPagingStrategy(resource) === 'offset') {
    // The router writes `totalCount` exactly when the resource enables it.
    const connection = Type.Object(
      {
        pageInfo: Type.Unsafe(schemaRef(PAGE_INFO_SCHEMA)),
        nodes: Type.Array(Type.Unsafe(schemaRef(names.record))),
        ...(resource.query.enableTotalCount ? { totalCount: Type.Integer({ minimum: 0 }) } : {}),
        ...(resource.query.enableTotalCount && resource.query.countStrategy !== 'exact'
          ? { totalCountIsEstimate: Type.Optional(Type.Boolean()) }
          : {})
      },
      { additionalProperties: false }
    )
    schemas[names.page] = toOpenApiSchema(connection)
  }
  return schemas
}

/** `/widgets/:id/rename` → `/widgets/{id}/rename`, the template OpenAPI paths use. */
function pathTemplate(path: string) {
  return path.replace(/:(\w+)/g, '{$1}')
}

/** Parameters of a Koa route path: `:id` is typed after the IDField, anything else is a string. */
function pathParameters(resource: ResolvedResource, path: string): ParameterObject[] {
  return [...path.matchAll(/:(\w+)/g)].map(([, name]) => {
    const id = name === 'id' ? resource.idField : undefined
    const schema = id ? omitKeywords(toOpenApiSchema(id.schema), 'readOnly', 'default', 'description') : {}
    return {
      name,
      in: 'path',
      required: true,
      ...(id ? { description: `${resource.name} ${id.name}` } : {}),
      schema: { type: 'string', ...schema }
    }
  })
}

/**
 * One query parameter per property of the query-string schema the endpoint validates with, so the document
 * cannot offer a parameter the endpoint refuses, or miss one it requires.
 */
function queryParameters(resource: ResolvedResource, querySchema: TObject): ParameterObject[] {
  const required = new Set(querySchema.required ?? [])
  return Object.entries(querySchema.properties).map(([name, property]: [string, TSchema]) => {
    const filter = resource.fieldMap.has(name) ? `Only records whose ${name} equals this value` : undefined
    const description = [property.description, filter].filter(Boolean).join('. ')
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      schema: omitKeywords(toOpenApiSchema(property), 'description')
    }
  })
}

const json = (schema: SchemaObject | Reference) => ({ 'application/json': { schema } })

const ok = (description: string, schema: SchemaObject | Reference): ResponseObject => ({
  description,
  content: json(schema)
})

function exportResponse(resource: ResolvedResource): ResponseObject {
  const columns = serializedFields(resource).map((field) => field.name)
  const maxRows = resource.definition.export?.maxRows
  const file = resource.basePath.split('/').pop()
  return {
    description:
      `CSV with a header row, columns ${columns.join(', ')}; or, for Accept: application/x-ndjson, ` +
      'NDJSON: one JSON object per line with those members; with resumable=true, a last column (member) ' +
      "$after holding the row's resume token",
    headers: {
      'Content-Disposition': {
        description: `${file}.csv, or ${file}.ndjson for NDJSON`,
        schema: { type: 'string', example: `attachment; filename="${file}.csv"` }
      },
      ...(resource.query.enableTotalCount
        ? {
            'X-Total-Count': {
              description:
                'The rows of the whole export (at most the row limit), counted at its start, or the ' +
                "planner's estimate (countStrategy), for a progress bar",
              schema: { type: 'integer' }
            },
            'X-Total-Count-Is-Estimate': {
              description: 'true when X-Total-Count is an estimate',
              schema: { type: 'string', enum: ['true'] }
            }
          }
        : {}),
      ...(maxRows === undefined
        ? {}
        : {
            'X-Export-Row-Limit': {
              description: 'The export stops after this many rows',
              schema: { type: 'integer' }
            }
          })
    },
    content: {
      'text/csv': { schema: { type: 'string' } },
      'application/x-ndjson': { schema: { type: 'string' } }
    }
  }
}

/** The aggregate endpoint's JSON: each node has the members the request asked for. */
function aggregatePageSchema(): SchemaObject {
  const members = { type: 'object', additionalProperties: true } as SchemaObject
  return {
    type: 'object',
    required: ['nodes', 'pageInfo'],
    properties: {
      nodes: {
        type: 'array',
        items: {
          type: 'object',
          properties: Object.fromEntries(
            [
              ...['groupBy', ...AGGREGATE_FUNCTIONS, 'percentile'],
              // Over a date bucket: the running values and the compared buckets' aggregates, by function.
              ...['running', 'previous', 'periodAgo']
            ].map((m) => [m, members])
          )
        }
      },
      pageInfo: schemaRef(PAGE_INFO_SCHEMA),
      totalCount: { type: 'integer', minimum: 0 }
    }
  } as SchemaObject
}

/** Where a resource's operations are added, each at its path and method. */
interface Operations {
  resource: ResolvedResource
  names: ReturnType<typeof componentNames>
  /** The record's schema. */
  record: ReturnType<typeof schemaRef>
  base: string
  add(
    path: string,
    method: HttpMethod,
    operation: OperationName,
    spec: Omit<OperationObject, 'operationId' | 'tags'>
  ): void
}

/** The service method each operation calls, whose guards decide whether it needs a token. */
const SERVICE_METHODS = {
  queryMany: 'find',
  exportMany: 'find',
  aggregate: 'aggregate',
  findById: 'get',
  createOne: 'create',
  // The create's POST of a resource with an upsert key, which may also change records: both guards apply.
  createOrUpsert: 'upsert',
  importMany: 'create',
  updateOne: 'update',
  patchOne: 'patch',
  patchMany: 'patch',
  deleteOne: 'remove',
  deleteMany: 'remove'
} satisfies Record<string, GuardedMethod>

type OperationName = keyof typeof SERVICE_METHODS

export interface ResourcePathsOptions {
  /** Document the guarded operations as needing the security scheme (and answering 401). */
  security: boolean
}

/** Every REST operation of a resource, by OpenAPI path and method, as the router serves them. */
export function resourcePaths(
  resource: ResolvedResource,
  options: ResourcePathsOptions
): Record<string, PathItemObject> {
  const names = componentNames(resource)
  const paths: Record<string, PathItemObject> = {}
  const add: Operations['add'] = (
    path,
    method,
    operation,
    { summary, description, parameters = [], responses, ...rest }
  ) => {
    const allParameters = [...pathParameters(resource, path), ...parameters]
    const security = options.security ? operationSecurity(resource, SERVICE_METHODS[operation]) : undefined
    const item = (paths[pathTemplate(path)] ??= {})
    item[method] = {
      operationId: `${resource.plural}.${operation}`,
      tags: [resource.name],
      summary,
      ...(description ? { description } : {}),
      ...(allParameters.length ? { parameters: allParameters } : {}),
      ...rest,
      responses: { ...responses, ...security?.responses },
      ...(security ? { security: security.security } : {})
    }
  }
  const operations = { resource, names, record: schemaRef(names.record), base: `/${resource.basePath}`, add }
  readOperations(operations)
  writeOperations(operations)
  importOperation(operations)
  return paths
}

/** The reads: query, CSV export, aggregate, find by id. */
function readOperations({ resource, names, record, base, add }: Operations) {
  const { definition } = resource
  const list = listQueryOptions(resource)
  add(base, 'get', 'queryMany', {
    summary: `Query ${resource.name} records`,
    description: definition.read?.description,
    parameters: queryParameters(resource, collectionQuerySchema(resource, list)),
    responses: {
      '200': list.paging
        ? ok('One page of records', schemaRef(names.page))
        : ok('Every matching record', { type: 'array', items: record }),
      ...errorResponsesOf('BadRequest')
    }
  })
  if (!definition.export?.disabled) {
    add(exportPath(resource), 'get', 'exportMany', {
      summary: `Export ${resource.name} records as CSV or NDJSON`,
      description: definition.export?.description,
      parameters: queryParameters(resource, exportQuerySchema(resource)),
      responses: { '200': exportResponse(resource), ...errorResponsesOf('BadRequest', 'NotAcceptable') }
    })
  }
  if (resource.aggregateEnabled) {
    add(aggregatePath(resource), 'get', 'aggregate', {
      summary: `Aggregate ${resource.name} records`,
      description:
        "Counts, distinct counts, sums, averages, minimums and maximums of the matching records, grouped, filtered by their aggregates (having), ordered and paged, as GraphQL's aggregate query answers them.",
      parameters: queryParameters(resource, aggregateQuerySchema(resource)),
      responses: {
        '200': {
          description:
            'The groups: {nodes, pageInfo, totalCount (with totalCount=true)}, or CSV with a header row of groupBy.<field> and <function>.<field> columns',
          content: {
            ...json(aggregatePageSchema()),
            'text/csv': { schema: { type: 'string' } }
          }
        },
        ...errorResponsesOf('BadRequest')
      }
    })
  }
  add(`${base}/:id`, 'get', 'findById', {
    summary: `Find a ${resource.name} by id`,
    description: definition.read?.description,
    responses: {
      '200': tagged(resource, ok(`The ${resource.name}`, record)),
      ...errorResponsesOf('BadRequest', 'NotFound')
    }
  })
}

/** A versioned resource's single-record answers carry the version as `ETag`. */
function tagged<T extends object>(resource: ResolvedResource, response: T): T {
  if (!resource.version) return response
  const description = `The record's ${resource.version.field.name}, quoted: what If-Match takes`
  return { ...response, headers: { ETag: { description, schema: { type: 'string' } } } }
}

/** `If-Match` on the writes of one record (optimistic concurrency), with the 412 and, if required, 428. */
function preconditionsOf(resource: ResolvedResource) {
  const required = resource.version?.required === true
  const parameters = [
    {
      name: 'If-Match',
      in: 'header' as const,
      required,
      description: resource.version
        ? `The record's ETag (its ${resource.version.field.name}), several, or *: a record changed since is a 412`
        : 'Only * applies: these records have no versions, so any other tag is a 412',
      schema: { type: 'string' as const }
    }
  ]
  const responses = errorResponsesOf(
    ...(['PreconditionFailed', ...(required ? ['PreconditionRequired'] : [])] as ErrorResponseName[])
  )
  return { parameters, responses }
}

const IMPORT_REPORT: SchemaObject = {
  type: 'object',
  description:
    'lines, imported, failed, skipped (committed by an earlier request with the key), dryRun, ignoredColumns, ' +
    'errors: [{ line, field, message }] (at most import.maxErrors), errorsTruncated'
}

/** `POST /{basePath}/import`: CSV or NDJSON in, the report (JSON, CSV of the errors, or an event stream) out. */
function importOperation({ resource, add }: Operations) {
  const { definition } = resource
  if (definition.create?.disabled || definition.import?.disabled) return
  const text = (description: string) => ({ schema: { type: 'string' as const, description } })
  add(importPath(resource), 'post', 'importMany', {
    summary: `Import ${resource.name} records from CSV or NDJSON`,
    description: [
      definition.import?.description,
      'Each record is created as by createOne (hooks, validation, authorization), ' +
        `${resource.importSettings.batchSize} lines per transaction; a failed line fails alone.`
    ]
      .filter(Boolean)
      .join(' '),
    parameters: [
      {
        name: 'dryRun',
        in: 'query',
        required: false,
        description: 'Run everything, write nothing',
        schema: { type: 'boolean' }
      },
      {
        name: 'onConflict',
        in: 'query',
        required: false,
        description: "upsert: write each record with the service's upsert method",
        schema: { type: 'string', enum: ['error', 'upsert'] }
      },
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Names the import: sent again with the same body, it resumes after the last committed line',
        schema: { type: 'string', maxLength: 200 }
      }
    ],
    requestBody: {
      required: true,
      content: {
        'text/csv': text("The export's CSV: a header row of field names, then one record per row"),
        'application/x-ndjson': text('One JSON object per line')
      }
    },
    responses: {
      '200': {
        description: 'The report; with Accept: text/event-stream, progress events then a report event',
        content: {
          ...json(IMPORT_REPORT),
          'text/csv': text('The line errors: line,field,message'),
          'text/event-stream': text('event: progress / event: report / event: error, data: JSON')
        }
      },
      ...errorResponsesOf(
        'BadRequest',
        'Conflict',
        'PayloadTooLarge',
        'UnsupportedMediaType',
        'Unprocessable'
      )
    }
  })
}

/** The writes: create, update (PUT and PATCH), delete, and delete by query where `multi` allows it. */
function writeOperations({ resource, names, record, base, add }: Operations) {
  const { definition } = resource
  const body = (name: string) => ({ required: true, content: json(schemaRef(name)) })
  const max = maxMultiOf(resource)
  if (!definition.create?.disabled) {
    const many = allowsMulti(resource, 'create')
    const list = (schema: object) => ({ type: 'array', items: schema, maxItems: max })
    const upsert = upsertOf(resource, many ? { anyOf: [record, list(record)] } : record)
    add(base, 'post', upsert ? 'createOrUpsert' : 'createOne', {
      summary: many ? `Create a ${resource.name}, or several` : `Create a ${resource.name}`,
      description: [
        definition.create?.description,
        many &&
          `A list creates several (Feathers' multi): at most ${max}, each checked first, in one transaction.`,
        upsert?.description
      ]
        .filter(Boolean)
        .join(' '),
      ...(upsert ? { parameters: upsert.parameters } : {}),
      requestBody: many
        ? {
            required: true,
            content: json({ anyOf: [schemaRef(names.create), list(schemaRef(names.create))] })
          }
        : body(names.create),
      responses: {
        '201': ok(
          many ? 'The created record, or records' : 'The created record',
          many ? { anyOf: [record, list(record)] } : record
        ),
        ...upsert?.responses,
        ...errorResponsesOf('BadRequest', 'UnsupportedMediaType', ...(upsert ? ['Conflict' as const] : []))
      }
    })
  }
  const { parameters: preconditions, responses: preconditionResponses } = preconditionsOf(resource)
  if (!definition.update?.disabled) {
    const update = {
      description: definition.update?.one?.description,
      parameters: preconditions,
      requestBody: body(names.update),
      responses: {
        '200': tagged(resource, ok('The updated record', record)),
        ...errorResponsesOf('BadRequest', 'NotFound', 'UnsupportedMediaType'),
        ...preconditionResponses
      }
    }
    // PUT and PATCH do the same partial update; absent properties keep their values.
    add(updatePath(resource), 'put', 'updateOne', {
      summary: `Update a ${resource.name} (partial)`,
      ...update
    })
    add(updatePath(resource), 'patch', 'patchOne', {
      summary: `Update a ${resource.name} (partial)`,
      ...update
    })
    if (allowsMulti(resource, 'patch')) {
      add(base, 'patch', 'patchMany', {
        summary: `Update the ${resource.name} records the query names (partial)`,
        description: multiDescription(resource),
        parameters: multiQueryParameters(resource),
        requestBody: body(names.update),
        responses: {
          '200': ok('The updated records', { type: 'array', items: record }),
          ...errorResponsesOf('BadRequest', 'UnsupportedMediaType')
        }
      })
    }
  }
  if (!definition.delete?.disabled) {
    add(deletePath(resource), 'delete', 'deleteOne', {
      summary: definition.delete?.useSoftDelete
        ? `Soft-delete a ${resource.name}`
        : `Delete a ${resource.name}`,
      description: definition.delete?.one?.description,
      parameters: preconditions,
      responses: {
        '200': ok('The deleted record', record),
        ...errorResponsesOf('BadRequest', 'NotFound'),
        ...preconditionResponses
      }
    })
    if (allowsMulti(resource, 'remove')) {
      add(base, 'delete', 'deleteMany', {
        summary: `Delete the ${resource.name} records the query names`,
        description: multiDescription(resource),
        parameters: multiQueryParameters(resource),
        responses: {
          '200': ok('The deleted records', { type: 'array', items: record }),
          ...errorResponsesOf('BadRequest')
        }
      })
    }
  }
}

/**
 * Where the resource has an upsert key, the create's POST upserts with RFC 7240's
 * `Prefer: resolution=merge-duplicates` (PostgREST's convention): one URL, so one operation, which documents
 * the header, the 200 of an upsert that changed a record and `Preference-Applied`.
 */
function upsertOf(resource: ResolvedResource, answer: SchemaObject | Reference) {
  if (!resource.upsertKey) return undefined
  const key = resource.upsertKey.map((field) => field.name).join(', ')
  const applied = {
    'Preference-Applied': {
      description: 'resolution=merge-duplicates: the body was upserted',
      schema: { type: 'string' as const }
    }
  }
  return {
    description: [
      `With \`Prefer: resolution=merge-duplicates\` the body is upserted by its ${key}: a record holding the same`,
      'is changed to the fields the body holds (others keep their values), any other is created, race-free;',
      '201 when every record was created, 200 otherwise. A record holding the key that the caller may not',
      `change is a 409, and nothing is written. ${resource.definition.upsert?.description ?? ''}`
    ]
      .join(' ')
      .trim(),
    parameters: [
      {
        name: 'Prefer',
        in: 'header' as const,
        required: false,
        description: 'resolution=merge-duplicates upserts the body (RFC 7240); other resolutions are a 400',
        schema: { type: 'string' as const, examples: ['resolution=merge-duplicates'] }
      }
    ],
    responses: {
      '200': { ...ok('Upserted: the records as written, an existing one changed', answer), headers: applied }
    }
  }
}

/**
 * The query of a multi patch or remove. Feathers' REST transport answers them (`patch(null, data, { query })`,
 * `remove(null, { query })`); there is no spec route at the base path for those methods.
 */
function multiQueryParameters(resource: ResolvedResource) {
  const query = collectionQuerySchema(resource, { paging: false, filters: true })
  const { query: _search, ...equalities } = query.properties
  return queryParameters(resource, Type.Object(equalities))
}

function multiDescription(resource: ResolvedResource) {
  return (
    "Feathers' query syntax: equality parameters as below, or operators (`id[$in][]=1&id[$in][]=2`). " +
    `Every record the query reaches, at most ${maxMultiOf(resource)} (more is a 400); one transaction.`
  )
}
