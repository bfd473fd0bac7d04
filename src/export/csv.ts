import { stringify } from 'csv-stringify'
import type { ResolvedResource } from '../resource/resolve'

/**
 * The CSV encoder of an export: a header row of the serialized fields in schema order (also for zero rows),
 * strings quoted with quotes doubled, numbers bare, booleans `true`/`false`, dates ISO 8601 UTC (bare),
 * null empty, `\n` line ends, and cells a spreadsheet would run as a formula prefixed with `'`.
 */
export function csvEncoder(resource: ResolvedResource) {
  const fields = resource.fields.filter((field) => field.serialized)
  return stringify({
    header: true,
    columns: fields.map((field) => ({ key: field.name, header: field.name })),
    quoted_string: true,
    escape_formulas: true,
    record_delimiter: '\n',
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      date: (value) => value.toISOString()
    }
  })
}

/** Records carry dates as ISO strings; as Date objects the encoder writes them bare, not quoted like text. */
export function toCsvRow(resource: ResolvedResource, record: Record<string, unknown>) {
  const row = { ...record }
  for (const field of resource.fields) {
    const value = row[field.name]
    if (field.kind === 'date' && typeof value === 'string') row[field.name] = new Date(value)
  }
  return row
}
