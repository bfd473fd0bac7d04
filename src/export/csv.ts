import { stringify } from 'csv-stringify'
import { serializedFields, type ResolvedResource } from '../resource/resolve'

/**
 * The CSV encoder of an export: a header row of the serialized fields in schema order (also for zero rows),
 * strings quoted with quotes doubled, numbers bare, booleans `true`/`false`, dates ISO 8601 UTC (bare),
 * null empty, `\n` line ends, and cells a spreadsheet would run as a formula (`= + - @`, tab, CR) prefixed
 * with `'` by csv-stringify's `escape_formulas`.
 */
export function csvEncoder(resource: ResolvedResource) {
  const fields = serializedFields(resource)
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

/**
 * Records carry dates as ISO strings; as Date objects the encoder writes them bare, not quoted like text.
 * (A per-field cast option would do the same, but csv-stringify re-normalizes its options for each such
 * field, which halves the export's speed.) Converts in place: records are fresh objects of this request.
 */
export function csvRowWriter(resource: ResolvedResource) {
  const dates = serializedFields(resource).filter((field) => field.kind === 'date').map((field) => field.name)
  return (record: Record<string, unknown>) => {
    for (const name of dates) {
      const value = record[name]
      if (typeof value === 'string') record[name] = new Date(value)
    }
    return record
  }
}
