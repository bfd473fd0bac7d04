import { stringify, type Options } from 'csv-stringify/sync'
import { serializedFields, type ResolvedResource } from '../../resource/resolved'

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

/**
 * The CSV of an export, one page of records at a time: a header row of the serialized fields in schema order
 * (also for zero rows), strings quoted with quotes doubled, numbers bare, booleans `true`/`false`, dates
 * ISO 8601 UTC (bare), null empty, `\n` line ends, and cells a spreadsheet would run as a formula
 * (`= + - @`, tab, CR) prefixed with `'` by csv-stringify's `escape_formulas`.
 *
 * A page is encoded by one call of csv-stringify's synchronous API rather than record by record through its
 * stream: each record written to a stream is a write of its own through Node's stream machinery, which cost
 * more than encoding it. Records become arrays in column order, which csv-stringify reads without looking
 * each column up as a property path.
 */
export function csvPageEncoder(resource: ResolvedResource) {
  const fields = serializedFields(resource)
  const names = fields.map((field) => field.name)
  const dates = fields.map((field) => field.kind === 'date')
  const options: Options = {
    columns: fields.map((field) => ({ key: field.name, header: field.name })),
    quoted_string: true,
    escape_formulas: true,
    record_delimiter: '\n',
    cast: {
      number: numberText,
      boolean: (value) => (value ? 'true' : 'false'),
      // A hook may put a Date in a record; it is written as the plugin's own dates are.
      date: (value) => value.toISOString(),
      object: (value) => (value instanceof BareCell ? value.text : JSON.stringify(value))
    }
  }
  const withHeader = { ...options, header: true }
  const toRow = (record: Record<string, unknown>) => {
    const row = new Array<unknown>(names.length)
    for (let index = 0; index < names.length; index++) {
      const value = record[names[index]]
      row[index] = dates[index] && typeof value === 'string' ? new BareCell(value) : value
    }
    return row
  }
  /** The CSV text of `records`, after the header row when `first`. */
  return (records: Array<Record<string, unknown>>, first: boolean) =>
    stringify(records.map(toRow), first ? withHeader : options)
}
