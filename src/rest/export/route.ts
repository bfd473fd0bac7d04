import type Router from '@koa/router'
import type { Application } from '@feathersjs/koa'
import type { Context } from '../../common/koa'
import { PassThrough, Readable, pipeline } from 'node:stream'
import type { ResolvedResource } from '../../resource/resolved'
import { resourceService } from '../../service/resource-service'
import type { ResourceRecord } from '../../model/records'
import type { Page } from '../../model/page'
import { externalCall } from '../../feathers/external-call'
import { exportedPages, type ReadPage } from './batches'
import { restParams } from '../params'
import { exportQueryParser } from './export-query'
import { exportResumption } from './resumption'
import type { ResumeTokens } from './resume-token'
import { CSV_FORMAT, negotiatedFormat, type PageEncoder } from './formats'
import { logFailure, loggerOf } from '../../common/logger'
import { conditionalRead, type ResolvedCaching } from '../../feathers/conditional-read'
import { withheldFields } from '../../authorization/field-rules'
import type { ResourceParams } from '../../model/records'
import { answerBudgetHeaders, budgetsOf } from '../../budgets/budgets'
import { rateLimitHeaders } from '../../budgets/headers'
import { PAID_ELSEWHERE } from '../../budgets/rows-hook'

/**
 * Reads the first page before anything is sent, so that a failure up to there (hooks, authorization, the
 * first database read) is still an ordinary JSON error. Then yields the text of each page, the first page's
 * with what starts the file (the CSV's header) unless `resumed`, at most `maxRows` records in all.
 */
async function exportChunks(
  pages: AsyncIterable<ResourceRecord[]>,
  encode: PageEncoder,
  maxRows = Infinity,
  ended: (rows: number) => void = () => {},
  resumed = false
) {
  const iterator = pages[Symbol.asyncIterator]()
  const first = await iterator.next()
  async function* chunks() {
    let left = maxRows
    try {
      // A resumed export continues a file: no header row or byte order mark again.
      for (let next = first, header = !resumed; !next.done; next = await iterator.next(), header = false) {
        const records = next.value.length > left ? next.value.slice(0, left) : next.value
        left -= records.length
        const text = encode(records, header)
        // An empty chunk would read as the end of the stream.
        if (text) yield text
        if (left === 0) return
      }
      // No page at all still makes a file with what starts it (a CSV's header row).
      if (first.done && !resumed) {
        const text = encode([], true)
        if (text) yield text
      }
    } finally {
      // Also when the client went away or the cap was reached: ends the database reads.
      ended(maxRows - left)
      await iterator.return?.()
    }
  }
  return Readable.from(chunks(), { objectMode: false })
}

/**
 * What an export may stream from the caller's `exportRows` budget: what is left of it (at least 1, else a
 * 429 before anything is read), at most the resource's `export.maxRows`. It is taken before the first row and
 * what the file did not hold is given back when it ends, so exports at once never spend more than the budget;
 * an export that reaches the budget ends there, as at `maxRows`.
 */
async function exportBudget(app: Application, params: ResourceParams, maxRows: number | undefined) {
  const budgets = budgetsOf(app)
  const spending = await budgets?.take(params, 'exportRows', maxRows ?? Infinity, 1)
  if (!budgets || !spending) return undefined
  answerBudgetHeaders(params, rateLimitHeaders(spending))
  return {
    maxRows: spending.granted,
    settle: (rows: number) => {
      budgets.settle(spending, rows).catch((error: unknown) => logFailure(loggerOf(app), error))
    }
  }
}

/**
 * The export's row count, for a client's progress: the records it matches (the resource's `countStrategy`:
 * counted, or the planner's estimate, flagged), at most what it may send. Never a Content-Length: the
 * bytes are known once the last row is written.
 */
function answerRowCount(ctx: Context, page: Page<ResourceRecord>, maxRows = Infinity) {
  if (page.total === undefined) return
  ctx.set('X-Total-Count', String(Math.min(page.total, maxRows)))
  if (page.totalIsEstimate) ctx.set('X-Total-Count-Is-Estimate', 'true')
}

/** How a download the client abandoned ends the pipeline: not worth a stack trace in the log. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET'])

export function exportPath(resource: ResolvedResource) {
  return `/${resource.basePath}/export`
}

/**
 * `GET /{basePath}/export`: every matching record as CSV, or as NDJSON for `Accept: application/x-ndjson`,
 * streamed from the database to the client. It calls the service's `find` like the list endpoint, page after
 * keyset page, so filters, defaultFilter, search hooks, authorization, defaultSort, resolvers and after hooks
 * are the same; only offset paging is absent.
 */
export function exportRoute(
  router: Router,
  app: Application,
  resource: ResolvedResource,
  caching: ResolvedCaching
) {
  const parse = exportQueryParser(resource)
  const definedMaxRows = resource.definition.export?.maxRows
  const answer = async (ctx: Context) => {
    const format = negotiatedFormat((...types) => ctx.accepts(...types))
    const csv = format === CSV_FORMAT
    // Checked before anything is read; parsed again for each page, as hooks may change the query they get.
    const request = parse(ctx.query, csv)
    const resumption = exportResumption(resource, format.mediaType, request)
    const service = resourceService(app, resource)
    const budget = await exportBudget(app, restParams(ctx), definedMaxRows)
    const maxRows = budget?.maxRows ?? definedMaxRows
    let withheld: readonly string[] = []
    let tokens: ResumeTokens | undefined
    let first = true
    const readPage: ReadPage = async (keyset, limit) => {
      const { filter, search } = parse(ctx.query, csv)
      // The first read counts the whole export, the parts before a resumed one's included (progress).
      const totalCount = first && resource.query.enableTotalCount
      const params = restParams(ctx, { filter, search, paging: { limit }, keyset, totalCount })
      // The export pays for its rows from `exportRows`, not from the list's `rows`.
      ;(params as Record<symbol, unknown>)[PAID_ELSEWHERE] = true
      const page = (await externalCall(service, 'find', [params]).catch((error) => {
        throw resumption.renamed(error)
      })) as Page<ResourceRecord>
      withheld = withheldFields(page)
      if (first) {
        tokens = resumption.tokens(page, withheld)
        answerRowCount(ctx, page, maxRows)
      }
      first = false
      return page
    }
    const pages = exportedPages(
      readPage,
      resource.exportBatches,
      service.readsSynchronously,
      resumption.start
    )
    // Made when the first page is encoded, once the caller's field rules have said which columns it gets.
    let encoder: PageEncoder | undefined
    const encode: PageEncoder = (records, header) =>
      (encoder ??= format.encoder(resource, request.settings, withheld, tokens))(records, header)
    const chunks = await exportChunks(pages, encode, maxRows, budget?.settle, resumption.resumed).catch(
      async (error) => {
        budget?.settle(0)
        throw error
      }
    )
    const body = new PassThrough()
    // A failure after the first byte must not look like a complete file: reset the connection instead of
    // ending the chunked response normally.
    pipeline(chunks, body, (error) => {
      if (!error) return
      // A client that went away is not a server failure; anything else is, and goes to the plugin's logger.
      if (!CLIENT_GONE.has((error as NodeJS.ErrnoException).code ?? '')) logFailure(loggerOf(ctx.app), error)
      if (!ctx.res.destroyed) ctx.res.destroy(error)
    })
    ctx.status = 200
    ctx.type = format.contentType
    ctx.vary('Accept')
    ctx.attachment(`${resource.basePath.split('/').pop()}.${format.extension}`)
    if (definedMaxRows !== undefined) ctx.set('X-Export-Row-Limit', String(definedMaxRows))
    ctx.body = body
  }
  router.get(exportPath(resource), (ctx) => conditionalRead(ctx, caching, () => answer(ctx)))
}
