import { Conflict, FeathersError } from '@feathersjs/errors'
import { PayloadTooLarge } from '../common/errors'
import type { Knex } from 'knex'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Validate } from '../resource/validator'
import type { ImportSettings } from '../resource/resolved'
import type { ImportColumns } from './columns'
import type { ImportLine } from './lines'
import { isLineFailure, lineErrors } from './line-errors'
import { advanceKey, claimKey, type ImportProgress } from './progress-table'
import type { ImportLineError, ImportProgressEvent, ImportReport } from './report'
import { writeBatch, type BatchRecord } from './batch-writer'

export interface ImportRun {
  knex: Knex
  /** What one record's write is: the service's create (or upsert), hooks and all. */
  write: (record: Record<string, unknown>) => Promise<unknown>
  /** The create body's validation, run on each line before its batch is written. */
  validate: Validate
  lines: AsyncIterable<ImportLine>
  columns: ImportColumns
  settings: ImportSettings
  dryRun: boolean
  /** An Idempotency-Key, with what the import's options are (a key names one import). */
  key?: { value: string; resource: string; options: string }
  /** Called after each batch committed, and when the import ends. */
  progress?: (event: ImportProgressEvent) => void
  bytesRead: () => number
  bytesTotal?: number
  /** Whether another request with the key took the import over: this one stops before its next line. */
  superseded?: () => boolean
}

/**
 * Reads the lines, checks each against the create body's schema, and writes them a batch (`batchSize`
 * lines) per transaction with the key's progress (see `writeBatch`). Lines a committed batch of an earlier
 * request with the key covered are skipped unread: a resumed import neither repeats nor leaves out a line.
 * The body is read no further while a batch is written, so memory holds one batch whatever the file's size.
 * A failure that ends the import early carries the report so far in its `data.report`.
 */
export async function runImport(run: ImportRun): Promise<ImportReport> {
  const { settings } = run
  const report: ImportReport = {
    lines: 0,
    imported: 0,
    failed: 0,
    skipped: 0,
    dryRun: run.dryRun,
    ignoredColumns: [],
    errors: [],
    errorsTruncated: false
  }
  const fail = (errors: ImportLineError[]) => {
    report.failed++
    const room = settings.maxErrors - report.errors.length
    if (errors.length > room) report.errorsTruncated = true
    report.errors.push(...errors.slice(0, Math.max(0, room)))
  }
  const event = (): ImportProgressEvent => ({
    linesRead: report.lines,
    imported: report.imported,
    failed: report.failed,
    skipped: report.skipped,
    bytesRead: run.bytesRead(),
    ...(run.bytesTotal === undefined ? {} : { bytesTotal: run.bytesTotal })
  })
  const key = run.key
  let committed: ImportProgress = key
    ? await claimKey(run.knex, key.value, key.resource, key.options)
    : { line: 0, imported: 0, failed: 0 }
  const started = performance.now()
  let batch: BatchRecord[] = []
  let batchLines = 0
  /** Lines of the batch that failed their check, before it is written. */
  let batchFailed = 0
  let lastLine = committed.line

  const flush = async () => {
    if (batchLines === 0) return
    const records = batch
    const refused = batchFailed
    batch = []
    batchLines = 0
    batchFailed = 0
    let next: ImportProgress | undefined
    const outcome = await writeBatch(
      run.knex,
      records,
      run.write,
      async (trx, written) => {
        if (!key) return
        next = {
          line: lastLine,
          imported: committed.imported + written.imported,
          failed: committed.failed + refused + written.failures.length
        }
        await advanceKey(trx, key.value, committed, next)
      },
      run.dryRun
    )
    if (next) committed = next
    report.imported += outcome.imported
    for (const { line, error } of outcome.failures) fail(lineErrors(line, error as never))
    run.progress?.(event())
    await keepRate()
  }
  const keepRate = async () => {
    const due = (report.imported / settings.maxRowsPerSecond) * 1000 - (performance.now() - started)
    if (due > 0) await sleep(due)
  }

  /** The line's errors against the create body's schema; none, and it joins the batch. */
  const checked = (entry: ImportLine) => {
    try {
      batch.push({ line: entry.line, record: run.validate(entry.record) })
      return undefined
    } catch (error) {
      if (!isLineFailure(error)) throw error
      return lineErrors(entry.line, error)
    }
  }

  try {
    for await (const entry of run.lines) {
      if (run.superseded?.()) {
        throw new Conflict(`Another request with Idempotency-Key ${key?.value} took this import over`)
      }
      report.lines++
      if (report.lines > settings.maxRows) {
        throw new PayloadTooLarge(
          `An import holds at most ${settings.maxRows} records (the import's maxRows)`
        )
      }
      if (entry.line <= committed.line) {
        report.skipped++
        continue
      }
      lastLine = entry.line
      batchLines++
      const errors = entry.errors ? lineErrors(entry.line, entry.errors) : checked(entry)
      if (errors) {
        batchFailed++
        fail(errors)
      }
      if (batchLines >= settings.batchSize) await flush()
    }
    await flush()
  } catch (error) {
    report.ignoredColumns = [...run.columns.ignored]
    throw withReport(error, report)
  }
  report.ignoredColumns = [...run.columns.ignored]
  return report
}

/** The report so far on a failure that ended the import, for the client to see what went in. */
function withReport(error: unknown, report: ImportReport) {
  if (error instanceof FeathersError) {
    const { data } = error
    ;(error as { data: unknown }).data = { ...(data && typeof data === 'object' ? data : {}), report }
  }
  return error
}
