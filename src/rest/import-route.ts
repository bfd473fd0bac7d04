import type Router from '@koa/router'
import type { Application } from '@feathersjs/koa'
import { FeathersError, GeneralError } from '@feathersjs/errors'
import { PassThrough, Transform, pipeline, type Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import type { Context } from '../common/koa'
import { PayloadTooLarge, UnsupportedMediaType } from '../common/errors'
import { logFailure, loggerOf } from '../common/logger'
import type { ImportSettings, ResolvedResource } from '../resource/resolved'
import { resourceService } from '../service/resource-service'
import { externalCall } from '../feathers/external-call'
import { IMPORT_STREAM, type ImportData, type ImportFormat, type ImportStream } from '../import/import-call'
import { reportCsv, reportHeaders, type ImportProgressEvent, type ImportReport } from '../import/report'
import { restParams } from './params'
import { importMediaType, importPath } from './import-body'
import { readAhead } from './read-ahead'

const FORMATS: Record<string, ImportFormat> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson' }

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress
}

/** The request's format by its Content-Type; anything else is a 415 naming the two. */
function formatOf(ctx: Context): ImportFormat {
  const media = (importMediaType(ctx) ?? ctx.get('content-type')).split(';')[0].trim().toLowerCase()
  const format = FORMATS[media]
  if (!format) {
    throw new UnsupportedMediaType(
      `An import is sent as Content-Type: text/csv or application/x-ndjson${media ? `, not ${media}` : ''}`
    )
  }
  return format
}

/**
 * The body as a stream of its bytes: inflated by its Content-Encoding (gzip, deflate, br), counted, a 413 once
 * past `maxBytes`, and read up to `readAheadBytes` ahead of the import into a temporary file (`readAhead`).
 * Beyond that the request is paused while a batch is written: memory holds a batch, not the file.
 */
function bodyOf(ctx: Context, { maxBytes, readAheadBytes }: ImportSettings) {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase()
  const decoder = DECODERS[encoding]
  if (!decoder && encoding !== 'identity') {
    throw new UnsupportedMediaType(
      `Content-Encoding ${encoding} is not one an import reads (gzip, deflate, br)`
    )
  }
  const declared = Number(ctx.get('content-length') || NaN)
  if (!decoder && declared > maxBytes) throw tooLarge(maxBytes)
  let bytes = 0
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      done(bytes > maxBytes ? tooLarge(maxBytes) : null, chunk)
    }
  })
  const stages: Array<NodeJS.ReadableStream | NodeJS.WritableStream> = [ctx.req]
  if (decoder) stages.push(decoder())
  stages.push(counter)
  const arriving = (pipeline as (...streams: unknown[]) => Readable)(...stages, () => {})
  const bytesTotal = !decoder && Number.isFinite(declared) ? declared : undefined
  if (readAheadBytes === 0) return { body: arriving, bytesRead: () => bytes, bytesTotal }
  const { body, taken } = readAhead(arriving, readAheadBytes)
  return { body, bytesRead: taken, bytesTotal }
}

/** A client that closes its connection before the answer stops its import at the next line it reads. */
function stopWhenClientLeaves(ctx: Context, body: Readable) {
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) body.destroy(new Error('The client closed the connection'))
  })
}

function tooLarge(maxBytes: number) {
  return new PayloadTooLarge(`An import body holds at most ${maxBytes} bytes (the import's maxBytes)`)
}

/** The import's options from the query string and the Idempotency-Key header, as the method reads them. */
function importQuery(ctx: Context) {
  const query: Record<string, unknown> = { ...ctx.query }
  const key = ctx.get('idempotency-key')
  if (key) query.idempotencyKey = key
  return query
}

/** A failure as Feathers error JSON, for an event stream's `error` event. */
function errorJson(ctx: Context, error: unknown) {
  if (error instanceof FeathersError) return error.toJSON()
  logFailure(loggerOf(ctx.app), error)
  return new GeneralError('Internal server error').toJSON()
}

/** The least time between two progress events of an event stream. */
const PROGRESS_INTERVAL_MS = 200

/**
 * Answers while the import runs, as Server-Sent Events: `progress` events (`ImportProgressEvent`) at most
 * every 200 ms, then one `report` (the report) or `error` (Feathers error JSON) event, and the end.
 */
function eventStream(
  ctx: Context,
  run: (progress: (event: ImportProgressEvent) => void) => Promise<unknown>
) {
  const events = new PassThrough()
  const send = (name: string, data: unknown) => {
    if (!events.writableEnded) events.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  let last = 0
  const progress = (event: ImportProgressEvent) => {
    const now = performance.now()
    if (now - last < PROGRESS_INTERVAL_MS) return
    last = now
    send('progress', event)
  }
  run(progress)
    .then((report) => send('report', report))
    // A client that went away hears nothing more, and its leaving is no server failure to log.
    .catch((error: unknown) => ctx.res.destroyed || send('error', errorJson(ctx, error)))
    .finally(() => events.end())
  ctx.status = 200
  ctx.type = 'text/event-stream'
  ctx.set('Cache-Control', 'no-cache')
  // The stream may end before the body did (a failure): the connection must not wait for the rest.
  ctx.set('Connection', 'close')
  ctx.body = events
}

/**
 * `POST /{basePath}/import`: CSV (the export's format) or NDJSON streamed into the service's `import`
 * method, so its hooks, and each record's create hooks and `authorize`, apply. Answers the report as JSON,
 * as CSV (`Accept: text/csv`, one row per line error, the counts in `Import-*` headers), or as an event
 * stream of progress and the report (`Accept: text/event-stream`).
 */
export function importRoute(router: Router, app: Application, resource: ResolvedResource) {
  router.post(importPath(resource), async (ctx: Context) => {
    const format = formatOf(ctx)
    const answer = ctx.accepts('application/json', 'text/csv', 'text/event-stream')
    const { body, bytesRead, bytesTotal } = bodyOf(ctx, resource.importSettings)
    stopWhenClientLeaves(ctx, body)
    const service = resourceService(app, resource)
    const call = (progress?: (event: ImportProgressEvent) => void) => {
      const params = restParams(ctx)
      delete params.queryModel
      params.query = importQuery(ctx)
      const stream: ImportStream = { bytesRead, bytesTotal, progress }
      ;(params as Record<symbol, unknown>)[IMPORT_STREAM] = stream
      const data: ImportData = { body, format }
      return externalCall(service, 'import', [data, params])
        .catch((error: unknown) => {
          // The rest of a body the import stopped reading is not read: the connection closes after the answer.
          if (!ctx.req.complete && !ctx.headerSent) ctx.set('Connection', 'close')
          throw error
        })
        .finally(() => {
          // A call refused before it read the body (a hook, a guard) leaves it, and its read-ahead file, unread.
          if (!body.destroyed) body.destroy()
        }) as Promise<ImportReport>
    }
    ctx.vary('Accept')
    if (answer === 'text/event-stream') return eventStream(ctx, call)
    let report: ImportReport
    try {
      report = await call()
    } catch (error) {
      // A client that went away (a cut upload) hears nothing more, and is no server failure to log. (A Feathers
      // error, a 409 of an import taken over included, is answered while the connection is there.)
      if (!(error instanceof FeathersError) && (ctx.req.socket?.destroyed ?? true)) {
        ctx.respond = false
        ctx.res.destroy()
        return
      }
      throw error
    }
    if (answer === 'text/csv') {
      ctx.set(reportHeaders(report))
      ctx.type = 'text/csv; charset=utf-8'
      ctx.body = reportCsv(report)
      return
    }
    ctx.body = report
  })
}
