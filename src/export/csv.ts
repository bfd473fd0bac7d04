import { stringify } from 'csv-stringify'
import type { ResolvedResource } from '../resource/resolve'

/**
 * The CSV encoder of an export: a header row of the serialized fields in schema order (also for zero rows),
 * strings quoted with quotes doubled, numbers bare, booleans `true`/`false`, dates ISO 8601 UTC (bare),
 * null empty and `\n` line ends.
 */
export function csvEncoder(resource: ResolvedResource) {
  const fields = resource.fields.filter((field) => field.serialized)
  return stringify({
    header: true,
    columns: fields.map((field) => ({ key: field.name, header: field.name })),
    quoted_string: true,
    record_delimiter: '\n',
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      date: (value) => value.toISOString()
    }
  })
}

/**
 * Text a spreadsheet would run as a formula. csv-stringify's `escape_formulas` leaves tab and carriage
 * return out, so the guard is ours, for every trigger.
 */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * A record as the encoder's row: dates as Date objects (written bare, not quoted like text) and
 * formula-like text prefixed with `'`.
 */
export function toCsvRow(resource: ResolvedResource, record: Record<string, unknown>) {
  const row = { ...record }
  for (const field of resource.fields) {
    const value = row[field.name]
    if (typeof value !== 'string') continue
    if (field.kind === 'date') row[field.name] = new Date(value)
    else if (FORMULA_START.test(value)) row[field.name] = `'${value}`
  }
  return row
}
