import type Router from '@koa/router'
import type { Application } from '@feathersjs/koa'
import { Readable, Transform, pipeline } from 'node:stream'
import type { ResolvedResource } from '../resource/resolve'
import type { ResourceRecord, ResourceService } from '../service/resource-service'
import { collectionQueryParser } from '../rest/collection-query'
import { restParams } from '../rest/params'
import { csvEncoder, toCsvRow } from './csv'

/**
 * Takes the first record before anything is sent, so that a failure up to there (hooks, authorization,
 * the first database read) is still an ordinary JSON error; then yields it and the rest.
 */
async function startedStream(records: Readable): Promise<Readable> {
  const iterator = records[Symbol.asyncIterator]()
  const first = await iterator.next()
  async function* all() {
    try {
      if (first.done) return
      yield first.value
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value
    } finally {
      // Also when the consumer stops early: ends the database reads.
      await iterator.return?.()
    }
  }
  return Readable.from(all(), { objectMode: true })
}

function capped(limit: number | undefined) {
  let seen = 0
  return new Transform({
    objectMode: true,
    transform(record, _encoding, callback) {
      seen += 1
      if (limit === undefined || seen <= limit) callback(null, record)
      else {
        this.push(null)
        callback()
      }
    }
  })
}

/**
 * `GET /{basePath}/export`: every matching record as CSV, streamed from the database to the client. It calls
 * the service's `find` like the list endpoint, so filters, defaultFilter, search hooks, authorization and
 * defaultSort are the same; only paging is absent.
 */
export function exportRoute(router: Router, app: Application, resource: ResolvedResource) {
  const parse = collectionQueryParser(resource, { paging: false, filters: true })
  const maxRows = resource.definition.export?.maxRows
  router.get(`/${resource.basePath}/export`, async (ctx) => {
    const { filter, search } = parse(ctx.query)
    const service = app.service(resource.basePath) as unknown as ResourceService
    const records = await service.find({ ...restParams(ctx, { filter, search }), stream: true })
    const source = await startedStream(records)

    const encoder = csvEncoder(resource)
    const toRow = new Transform({
      objectMode: true,
      transform: (record: ResourceRecord, _encoding, callback) => callback(null, toCsvRow(resource, record))
    })
    // A failure after the first byte must not look like a complete file: reset the connection instead of
    // ending the chunked response normally.
    pipeline(source, capped(maxRows), toRow, encoder, (error) => {
      if (!error) return
      // A client that went away is not a server failure; anything else is, and is logged the Koa way.
      if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.app.emit('error', error, ctx)
      if (!ctx.res.destroyed) ctx.res.destroy(error)
    })
    ctx.status = 200
    ctx.type = 'text/csv; charset=utf-8'
    ctx.attachment(`${resource.basePath.split('/').pop()}.csv`)
    if (maxRows !== undefined) ctx.set('X-Export-Row-Limit', String(maxRows))
    ctx.body = encoder
  })
}
