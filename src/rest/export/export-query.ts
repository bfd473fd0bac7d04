import { Type, type TSchema } from '@sinclair/typebox'
import type { FieldError } from '../../common/errors'
import type { CsvSettings, ResolvedResource } from '../../resource/resolved'
import { compileValidator } from '../../resource/validator'
import { collectionQueryParser, collectionQuerySchema, EXPORT_QUERY_OPTIONS } from '../collection-query'

const BOOLEAN_VALUES = ['true', 'false', '1', '0']

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
        enum: BOOLEAN_VALUES,
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

/** Resumption, in both formats: tokens in each row, and where a resumed export starts. */
const RESUME_PARAMETERS: Record<string, TSchema> = {
  resumable: Type.Optional(
    Type.Unsafe<string>({
      type: 'string',
      enum: BOOLEAN_VALUES,
      default: 'false',
      description:
        "Add a last column (NDJSON: member) $after holding each row's resume token; implied by after"
    })
  ),
  after: Type.Optional(
    Type.String({
      description:
        'Resume a resumable export after the row whose $after this is: same parameters, no header row, ' +
        'no byte order mark, so that the parts joined are the whole file'
    })
  )
}

/** The parameters that are no filter: the CSV's and resumption's. */
function ownParameters(resource: ResolvedResource) {
  return { ...csvParameters(resource), ...RESUME_PARAMETERS }
}

/** The query-string schema of `GET /{basePath}/export`: the filters, then the export's own parameters. */
export function exportQuerySchema(resource: ResolvedResource) {
  const own = ownParameters(resource)
  const filters = Object.entries(collectionQuerySchema(resource, EXPORT_QUERY_OPTIONS).properties).filter(
    ([name]) => !(name in own)
  )
  return Type.Object({ ...Object.fromEntries(filters), ...own }, { additionalProperties: false })
}

const isTrue = (value: unknown) => value === 'true' || value === '1'

/**
 * Reads the export's query string into the records' filter and search, the CSV's settings and resumption.
 * `csv` false (another format was negotiated): a CSV parameter is a 400 rather than a setting silently left
 * unused; so is `resumable=false` beside `after`, since a resumed export carries its tokens on.
 */
export function exportQueryParser(resource: ResolvedResource) {
  const own = ownParameters(resource)
  const csvOnly = csvParameters(resource)
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
      : Object.keys(mine)
          .filter((name) => name in csvOnly)
          .map((field) => ({ field, message: 'applies to CSV only' }))
    if (mine.after !== undefined && mine.resumable !== undefined && !isTrue(mine.resumable)) {
      misplaced.push({ field: 'resumable', message: 'a resumed export (after) carries its resume tokens on' })
    }
    const query = validate(mine, misplaced)
    const settings: CsvSettings = {
      bom: isTrue(query.bom),
      dateFormat: query.dateFormat as CsvSettings['dateFormat']
    }
    const after = query.after as string | undefined
    return {
      filter,
      search,
      settings,
      resume: { resumable: after !== undefined || isTrue(query.resumable), after }
    }
  }
}
