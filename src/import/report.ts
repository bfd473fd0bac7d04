import { stringify } from 'csv-stringify/sync'

export interface ImportLineError {
  line: number
  /** The field (column) at fault, `line` for the line as a whole, or null where the error names none. */
  field: string | null
  message: string
}

/** What an import did, answered when it ends (and with a failure that ended it early, in `data.report`). */
export interface ImportReport {
  /** Records read from the body (a CSV's header not counted), skipped ones included. */
  lines: number
  /** Records created (with `dryRun`, those that would have been). */
  imported: number
  /** Records refused: each has its errors in `errors`, while there is room. */
  failed: number
  /** Records an earlier request with the same Idempotency-Key committed, passed over. */
  skipped: number
  dryRun: boolean
  /** Columns (or NDJSON members) an export writes that a create does not take, left out. */
  ignoredColumns: string[]
  /** The failed lines' errors, at most the resource's `import.maxErrors`. */
  errors: ImportLineError[]
  /** Whether `errors` stopped at `import.maxErrors`. */
  errorsTruncated: boolean
}

/** What a progress event says: where the import is, and how far the body goes where it is known. */
export interface ImportProgressEvent {
  linesRead: number
  imported: number
  failed: number
  skipped: number
  bytesRead: number
  /** The body's Content-Length; absent when the body is chunked or compressed. */
  bytesTotal?: number
}

/** A report as CSV (`Accept: text/csv`): one row per line error, `line,field,message`. */
export function reportCsv(report: ImportReport) {
  const rows = report.errors.map((error) => [error.line, error.field, error.message])
  return stringify([['line', 'field', 'message'], ...rows], {
    quoted_string: true,
    escape_formulas: true,
    record_delimiter: '\n'
  })
}

/** The report's counts as response headers, beside a CSV report. */
export function reportHeaders(report: ImportReport): Record<string, string> {
  return {
    'Import-Lines': String(report.lines),
    'Import-Imported': String(report.imported),
    'Import-Failed': String(report.failed),
    'Import-Skipped': String(report.skipped),
    'Import-Dry-Run': String(report.dryRun)
  }
}
