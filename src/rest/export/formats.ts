import { NotAcceptable } from '@feathersjs/errors'
import type { CsvSettings, ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { csvPageEncoder } from './csv'
import { ndjsonPageEncoder } from './ndjson'
import type { ResumeTokens } from './resume-token'

/** The text of one page of records; `first` for the first page (a header row, a byte order mark). */
export type PageEncoder = (records: ResourceRecord[], first: boolean) => string

export interface ExportFormat {
  /** What `Accept` names to get this format. */
  mediaType: string
  /** The response's Content-Type. */
  contentType: string
  /** The downloaded file's extension. */
  extension: string
  /**
   * `withheld`: the fields the caller's field rules keep from it, which get no column; `tokens`: a
   * resumable export's, written after the fields.
   */
  encoder(
    resource: ResolvedResource,
    csv: CsvSettings,
    withheld: readonly string[],
    tokens?: ResumeTokens
  ): PageEncoder
}

/** The formats of the export; the first is the one a request gets that has no preference (no Accept, or any). */
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  {
    mediaType: 'text/csv',
    contentType: 'text/csv; charset=utf-8',
    extension: 'csv',
    encoder: csvPageEncoder
  },
  {
    mediaType: 'application/x-ndjson',
    contentType: 'application/x-ndjson',
    extension: 'ndjson',
    encoder: ndjsonPageEncoder
  }
]

export const CSV_FORMAT = EXPORT_FORMATS[0]

/**
 * The format the request's `Accept` header prefers (Koa's `ctx.accepts`, which weighs q-values and
 * wildcards); a 406 when it accepts none of them, before anything is read.
 */
export function negotiatedFormat(accepts: (...types: string[]) => string | false): ExportFormat {
  const chosen = accepts(...EXPORT_FORMATS.map((format) => format.mediaType))
  const format = EXPORT_FORMATS.find((entry) => entry.mediaType === chosen)
  if (!format) {
    throw new NotAcceptable(
      `The export answers ${EXPORT_FORMATS.map((entry) => entry.mediaType).join(' or ')}; Accept names neither`
    )
  }
  return format
}
