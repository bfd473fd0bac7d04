import { stringify, type Options } from 'csv-stringify/sync'
import { isoDate, parseIsoDate } from '../../resource/iso-date'
import { serializedFields, type CsvSettings, type ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { RESUME_COLUMN, type ResumeTokens } from './resume-token'

/**
 * A cell written as it is, never quoted: csv-stringify quotes values that were strings before casting, and
 * dates, which records carry as ISO strings, are written bare.
 */
class BareCell {
  constructor(readonly text: string) {}
}

/**
 * A number's text, as `String(value)` writes it, without V8's number-to-string cache, which would keep an
 * export's many distinct numbers alive into the old generation (docs/design-notes.md, "Numbers in the CSV
 * export"). JSON's number text is the same for finite numbers and is made without the cache.
 */
function numberText(value: number) {
  return Number.isFinite(value) ? JSON.stringify(value) : String(value)
}

/** The byte order mark that tells Excel the file is UTF-8, which it cannot tell otherwise. */
const BOM = '\uFEFF'

const UTC_DATE_TIME = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?Z$/

/**
 * A date-time as spreadsheets take one, `2026-09-20 12:30:00` in UTC, to the second. Records carry the
 * plugin's ISO strings; one a hook changed is read with the plugin's parser, and text that is no date-time
 * stays as it is.
 */
function spreadsheetDateTime(text: string) {
  let match = UTC_DATE_TIME.exec(text)
  if (!match) {
    const time = parseIsoDate(text)
    if (!Number.isNaN(time)) match = UTC_DATE_TIME.exec(isoDate(time))
  }
  return match ? `${match[1]} ${match[2]}` : text
}

/** How a date cell is written, by `dateFormat`. */
const DATE_TEXT = {
  iso: (text: string) => text,
  spreadsheet: spreadsheetDateTime
}

/**
 * The CSV of an export, one page of records at a time: with `bom`, a UTF-8 byte order mark first; a header
 * row of the serialized fields in schema order (also for zero rows), strings quoted with quotes doubled,
 * numbers bare, booleans `true`/`false`, dates bare (ISO 8601 UTC, or `YYYY-MM-DD HH:MM:SS` UTC with
 * `dateFormat: 'spreadsheet'`), null empty, `\n` line ends, and cells a spreadsheet would run as a formula
 * (`= + - @`, tab, CR) prefixed with `'` by csv-stringify's `escape_formulas`. With `tokens` (a resumable
 * export), a last column `$after` holds each row's resume token.
 *
 * A page is encoded by one call of csv-stringify's synchronous API rather than record by record through its
 * stream: each record written to a stream is a write of its own through Node's stream machinery, which cost
 * more than encoding it. Records become arrays in column order, which csv-stringify reads without looking
 * each column up as a property path.
 */
export function csvPageEncoder(
  resource: ResolvedResource,
  settings: CsvSettings,
  withheld: readonly string[] = [],
  tokens?: ResumeTokens
) {
  const fields = serializedFields(resource).filter((field) => !withheld.includes(field.name))
  const names = fields.map((field) => field.name)
  const dates = fields.map((field) => field.kind === 'date')
  const dateText = DATE_TEXT[settings.dateFormat]
  const columns = tokens ? [...names, RESUME_COLUMN] : names
  const options: Options = {
    columns: columns.map((name) => ({ key: name, header: name })),
    quoted_string: true,
    escape_formulas: true,
    record_delimiter: '\n',
    cast: {
      number: numberText,
      boolean: (value) => (value ? 'true' : 'false'),
      // A hook may put a Date in a record; it is written as the plugin's own dates are.
      date: (value) => dateText(value.toISOString()),
      object: (value) => (value instanceof BareCell ? value.text : JSON.stringify(value))
    }
  }
  const withHeader = { ...options, header: true }
  const toRow = (record: ResourceRecord) => {
    const row = new Array<unknown>(columns.length)
    for (let index = 0; index < names.length; index++) {
      const value = record[names[index]]
      row[index] = dates[index] && typeof value === 'string' ? new BareCell(dateText(value)) : value
    }
    // Bare: a token has nothing to quote, and a cell per row is worth its two bytes.
    if (tokens) row[names.length] = new BareCell(tokens(record))
    return row
  }
  /** The CSV text of `records`, after the byte order mark (with `bom`) and the header row when `first`. */
  return (records: ResourceRecord[], first: boolean) =>
    first
      ? (settings.bom ? BOM : '') + stringify(records.map(toRow), withHeader)
      : stringify(records.map(toRow), options)
}
