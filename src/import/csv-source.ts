import { BadRequest } from '@feathersjs/errors'
import { parse, CsvError } from 'csv-parse'
import type { Readable } from 'node:stream'
import type { ResolvedField } from '../resource/resolved'
import type { ImportColumns } from './columns'
import type { ImportLine } from './lines'

/** What csv-stringify's `escape_formulas` puts before a cell a spreadsheet would run: the export's guard. */
const GUARDED = /^'[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/
/** The export's `dateFormat: 'spreadsheet'`: `2026-09-20 12:30:45`, UTC. */
const SPREADSHEET_DATE_TIME = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)$/
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * A cell as the export wrote it, back to the value a create body carries. Text a field of another kind
 * cannot read stays text, for the create's validation to name the field.
 */
function cellValue(field: ResolvedField, text: string): unknown {
  switch (field.kind) {
    case 'integer':
    case 'number':
      return NUMBER.test(text) ? Number(text) : text
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text
    case 'date': {
      const spreadsheet = SPREADSHEET_DATE_TIME.exec(text)
      return spreadsheet ? `${spreadsheet[1]}T${spreadsheet[2]}.000Z` : text
    }
    default:
      return GUARDED.test(text) ? text.slice(1) : text
  }
}

/** csv-parse's failures that end the reading: the file is not CSV from there on. */
function malformed(error: unknown) {
  if (!(error instanceof CsvError)) return error
  const line = (error as CsvError & { lines?: number }).lines
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    return new BadRequest(`Line ${line}: longer than the import's maxLineBytes`, { line })
  }
  return new BadRequest(`Line ${line}: not CSV (${error.message})`, { line })
}

/**
 * The records of a CSV body, in the export's format: a header row naming the columns (a UTF-8 byte order
 * mark before it is skipped), then one record per row. An unquoted empty cell is null (the field is left
 * out where it cannot be null, so its default applies); a quoted one is the empty string. Numbers,
 * booleans (`true`/`false`) and date-times (ISO 8601, or the export's `spreadsheet` format) are read by
 * the column's field; a text cell loses the `'` the export put before `= + - @`, tab or CR.
 */
export async function* csvLines(
  body: Readable,
  columns: ImportColumns,
  maxLineBytes: number
): AsyncGenerator<ImportLine> {
  const parser = parse({
    bom: true,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: maxLineBytes,
    cast: (value, context) => (value === '' && !context.quoting ? null : value)
  })
  body.on('error', (error) => parser.destroy(error))
  body.pipe(parser)
  let fields: Array<ResolvedField | null> | undefined
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: Array<string | null>
      info: { lines: number }
    }>) {
      if (!fields) {
        fields = columns.header(record)
        continue
      }
      const line = info.lines
      if (record.length !== fields.length) {
        const message = `has ${record.length} cells, the header ${fields.length}`
        yield { line, errors: [{ field: 'line', message }] }
        continue
      }
      yield { line, record: recordOf(fields, record) }
    }
  } catch (error) {
    throw malformed(error)
  }
  if (!fields) throw new BadRequest('The CSV has no header row', { line: 1 })
}

function recordOf(fields: Array<ResolvedField | null>, cells: Array<string | null>) {
  const record: Record<string, unknown> = {}
  for (let index = 0; index < fields.length; index++) {
    const field = fields[index]
    if (field === null) continue
    const cell = cells[index]
    if (cell === null || (cell === '' && field.kind !== 'string')) {
      if (field.nullable) record[field.name] = null
      continue
    }
    record[field.name] = cellValue(field, cell)
  }
  return record
}
