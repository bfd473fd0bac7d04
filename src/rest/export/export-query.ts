import { Type, type TSchema } from '@sinclair/typebox'
import type { FieldError } from '../../common/errors'
import type { CsvSettings, ResolvedResource } from '../../resource/resolved'
import { compileValidator } from '../../resource/validator'
import { collectionQueryParser, collectionQuerySchema, EXPORT_QUERY_OPTIONS } from '../collection-query'

const BOM_VALUES = ['true', 'false', '1', '0']

/**
 * The parameters that shape the CSV rather than choose records, defaulting to the resource's export options.
 * As on the aggregate endpoint, they take their names before the filters: a field named `bom` or `dateFormat`
 * has no equality parameter on the export.
 */
function csvParameters(resource: ResolvedResource): Record<string, TSchema> {
  const { bom, dateFormat } = resource.exportCsv
  return {
    bom: Type.Optional(
      Type.Unsafe<string>({
        type: 'string',
        enum: BOM_VALUES,
        default: String(bom),
        description: 'CSV only: start with a UTF-8 byte order mark, which Excel needs to read UTF-8'
      })
    ),
    dateFormat: Type.Optional(
      Type.Union([Type.Literal('iso'), Type.Literal('spreadsheet')], {
        default: dateFormat,
        description:
          'CSV only: date-times as ISO 8601 (2026-09-20T12:30:00.000Z) or as spreadsheets read them ' +
          '(2026-09-20 12:30:00, UTC, to the second)'
      })
    )
  }
}

/** The query-string schema of `GET /{basePath}/export`: the filters, then the CSV's parameters. */
export function exportQuerySchema(resource: ResolvedResource) {
  const own = csvParameters(resource)
  const filters = Object.entries(collectionQuerySchema(resource, EXPORT_QUERY_OPTIONS).properties).filter(
    ([name]) => !(name in own)
  )
  return Type.Object({ ...Object.fromEntries(filters), ...own }, { additionalProperties: false })
}

/**
 * Reads the export's query string into the records' filter and search, and the CSV's settings. `csv` false
 * (another format was negotiated): a CSV parameter is a 400 rather than a setting silently left unused.
 */
export function exportQueryParser(resource: ResolvedResource) {
  const own = csvParameters(resource)
  const validate = compileValidator(Type.Object(own, { additionalProperties: false }), {
    coerce: true,
    what: 'Query'
  })
  const filters = collectionQueryParser(resource, EXPORT_QUERY_OPTIONS)
  return (raw: Record<string, unknown>, csv: boolean) => {
    const mine: Record<string, unknown> = {}
    const rest: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(raw)) (name in own ? mine : rest)[name] = value
    const { filter, search } = filters(rest)
    const misplaced: FieldError[] = csv
      ? []
      : Object.keys(mine).map((field) => ({ field, message: 'applies to CSV only' }))
    const query = validate(mine, misplaced)
    const settings: CsvSettings = {
      bom: query.bom === 'true' || query.bom === '1',
      dateFormat: query.dateFormat as CsvSettings['dateFormat']
    }
    return { filter, search, settings }
  }
}
