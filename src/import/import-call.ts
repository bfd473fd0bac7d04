import { BadRequest, Conflict } from '@feathersjs/errors'
import { Type } from '@sinclair/typebox'
import type { Knex } from 'knex'
import { Readable } from 'node:stream'
import { badField } from '../common/errors'
import type { ResourceParams } from '../model/records'
import { createSchemaOf } from '../resource/input-schemas'
import type { ResolvedResource } from '../resource/resolved'
import { compileValidator, type Validate } from '../resource/validator'
import { ImportColumns } from './columns'
import { csvLines } from './csv-source'
import type { ImportLine } from './lines'
import { ndjsonLines } from './ndjson-source'
import type { ImportProgressEvent, ImportReport } from './report'
import { runImport } from './run-import'

export type ImportFormat = 'csv' | 'ndjson'

/**
 * What `import` takes: the file's text as `csv` or `ndjson`, or the `records` themselves; exactly one.
 * Server code (the REST route) may give a readable `body` instead, with its `format`.
 */
export interface ImportData {
  csv?: string
  ndjson?: string
  records?: Array<Record<string, unknown>>
  body?: Readable
  format?: ImportFormat
}

/** What an HTTP transport tells an import about the body it streams, on `params[IMPORT_STREAM]`. */
export interface ImportStream {
  bytesRead(): number
  bytesTotal?: number
  progress?(event: ImportProgressEvent): void
}

/** Where the REST route puts its `ImportStream` in the call's params (server code only: no client sets it). */
export const IMPORT_STREAM = Symbol('feathers-query import stream')

/** The event a realtime caller's own connection gets after each batch: `service.on('import-progress')`. */
export const IMPORT_PROGRESS_EVENT = 'import-progress'

const QUERY = Type.Object(
  {
    dryRun: Type.Optional(Type.Boolean({ description: 'Run everything, write nothing' })),
    idempotencyKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[\\x21-\\x7e]+$',
        description: 'Names the import'
      })
    ),
    onConflict: Type.Optional(
      Type.Union([Type.Literal('error'), Type.Literal('upsert')], {
        description: "'upsert' writes each record with the service's upsert method"
      })
    )
  },
  { additionalProperties: false }
)

export type ImportQuery = { dryRun?: boolean; idempotencyKey?: string; onConflict?: 'error' | 'upsert' }

const readQuery = compileValidator<ImportQuery>(QUERY, { coerce: true, prefix: 'query', what: 'Query' })

/** The source of the lines: the given text or records, or the transport's stream. */
function linesOf(data: ImportData, resource: ResolvedResource, columns: ImportColumns) {
  const given = (['csv', 'ndjson', 'records', 'body'] as const).filter((name) => data?.[name] !== undefined)
  if (given.length !== 1) {
    throw badField('data', 'must have one of csv (text), ndjson (text) or records (a list of objects)')
  }
  const { maxLineBytes } = resource.importSettings
  const text = (name: 'csv' | 'ndjson') => {
    if (typeof data[name] !== 'string') throw badField(`data.${name}`, 'must be a string')
    return Readable.from([Buffer.from(data[name])])
  }
  let lines: AsyncIterable<ImportLine>
  if (data.csv !== undefined) lines = csvLines(text('csv'), columns, maxLineBytes)
  else if (data.ndjson !== undefined) lines = ndjsonLines(text('ndjson'), columns, maxLineBytes)
  else if (data.records !== undefined) lines = recordLines(data.records, columns)
  else {
    if (!(data.body instanceof Readable)) throw badField('data', 'must have csv, ndjson or records')
    const source = data.format === 'ndjson' ? ndjsonLines : csvLines
    lines = source(data.body, columns, maxLineBytes)
  }
  return lines
}

/** Records given as a list, line 1 the first: each must be an object. */
async function* recordLines(records: unknown, columns: ImportColumns): AsyncGenerator<ImportLine> {
  if (!Array.isArray(records)) throw badField('data.records', 'must be a list of objects')
  for (let index = 0; index < records.length; index++) {
    const value = records[index]
    const line = index + 1
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { line, errors: [{ field: 'line', message: 'must be an object' }] }
      continue
    }
    const record = { ...(value as Record<string, unknown>) }
    for (const name of Object.keys(record)) if (columns.leftOut(name)) delete record[name]
    yield { line, record }
  }
}

const validators = new WeakMap<ResolvedResource, Validate>()

/** The create body's validation, compiled once per resource. */
function createValidator(resource: ResolvedResource) {
  let validate = validators.get(resource)
  if (!validate) {
    validate = compileValidator(createSchemaOf(resource), { prefix: 'body', what: 'Record' })
    validators.set(resource, validate)
  }
  return validate
}

/** Imports with a key running in this process, and how to stop each. */
const running = new Map<string, { done: Promise<unknown>; supersede(): void }>()

/**
 * Runs the import of `key` alone in this process. A request with the key while another runs takes over: the
 * other stops before its next line (what it committed stays, its caller gets a 409), and this one goes on
 * from there. That is the retry of a cut upload, whose first request may still be writing what reached the
 * server before the cut; an upload still going is stopped as a duplicate. Across processes the key's
 * progress row keeps two requests from committing the same lines (`advanceKey`).
 */
async function exclusively<T>(
  key: string | undefined,
  body: Readable | undefined,
  work: (superseded: () => boolean) => Promise<T>
) {
  if (key === undefined) return work(() => false)
  const other = running.get(key)
  if (other) {
    other.supersede()
    await other.done.catch(() => undefined)
  }
  let superseded = false
  const mine = work(() => superseded)
  const supersede = () => {
    superseded = true
    // A body still arriving (or never to arrive, its connection gone quiet) is read no further.
    body?.destroy(new Conflict(`Another request with Idempotency-Key ${key} took this import over`))
  }
  const entry = { done: mine, supersede }
  running.set(key, entry)
  try {
    return await mine
  } finally {
    if (running.get(key) === entry) running.delete(key)
  }
}

export interface ImportTarget {
  resource: ResolvedResource
  knex: Knex
  /** The registered service: its create (or upsert) per record, its events. */
  service: {
    create(data: unknown, params: unknown): Promise<unknown>
    upsert?: (data: unknown, params: unknown) => Promise<unknown>
    emit(event: string, data: unknown, context: unknown): unknown
  }
}

/**
 * The `import` method: reads the call's options from `params.query`, then every record is created as a
 * `create` call with the caller's params would be (guards, validation, the application's hooks,
 * `authorize`), a batch per transaction. A realtime caller's connection gets `import-progress` events.
 */
export async function importRecords(
  target: ImportTarget,
  data: ImportData,
  params: ResourceParams
): Promise<ImportReport> {
  const { resource, service } = target
  const query = readQuery({ ...(params.query as object) })
  if (query.dryRun && query.idempotencyKey !== undefined) {
    throw new BadRequest('A dry run writes nothing to resume: send it without an Idempotency-Key', {
      errors: [{ field: 'idempotencyKey', message: 'is not allowed with dryRun' }]
    })
  }
  const upsert = query.onConflict === 'upsert'
  if (upsert && typeof service.upsert !== 'function') {
    throw badField('query.onConflict', `upsert needs an upsert method, which ${resource.name} has not`)
  }
  const columns = new ImportColumns(resource)
  const lines = linesOf(data, resource, columns)
  const stream = (params as Record<symbol, ImportStream | undefined>)[IMPORT_STREAM]
  const { query: _query, ...caller } = params
  const write = upsert
    ? (record: Record<string, unknown>) => service.upsert!(record, { ...caller, query: {} })
    : (record: Record<string, unknown>) => service.create(record, { ...caller, query: {} })
  const connection = (params as { connection?: unknown }).connection
  const progress = (event: ImportProgressEvent) => {
    stream?.progress?.(event)
    if (connection) {
      service.emit(IMPORT_PROGRESS_EVENT, event, { path: resource.basePath, service, params, result: event })
    }
  }
  const format = data.csv !== undefined || data.format === 'csv' ? 'csv' : data.records ? 'records' : 'ndjson'
  const options = JSON.stringify({ format, onConflict: query.onConflict ?? 'error' })
  return exclusively(query.idempotencyKey, data.body, (superseded) =>
    runImport({
      superseded,
      knex: target.knex,
      write,
      validate: createValidator(resource),
      lines,
      columns,
      settings: resource.importSettings,
      dryRun: query.dryRun ?? false,
      key:
        query.idempotencyKey === undefined
          ? undefined
          : { value: query.idempotencyKey, resource: resource.name, options },
      progress,
      bytesRead: stream?.bytesRead ?? (() => 0),
      bytesTotal: stream?.bytesTotal
    })
  )
}
