import { badField, withFieldsRenamed } from '../../common/errors'
import type { Filter, Keyset } from '../../model/query'
import type { Page } from '../../model/page'
import type { ResourceRecord } from '../../model/records'
import { serializedFields, type CsvSettings, type ResolvedResource } from '../../resource/resolved'
import { exportScope, readResumeToken, resumeTokens, type ResumeTokens } from './resume-token'

/** What the client asked for, as the export's query string said it. */
export interface ExportRequest {
  filter?: Filter
  search?: string
  settings: CsvSettings
  resume: { resumable: boolean; after?: string }
}

/**
 * The resumption of one export request: where it starts (after the row of `?after=`, else at the start),
 * and once its first page has told the order and the caller's columns, the rows' tokens. A resumed request
 * must be the export its token was made for: same resource, format, filter parameters, search, date format,
 * order and columns, else a 400 before anything is sent. Authorization is no part of that: it is the
 * caller's own on every request, so a resumed export under a narrower scope holds only what that scope
 * shows.
 */
export function exportResumption(resource: ResolvedResource, mediaType: string, request: ExportRequest) {
  const from = request.resume.after === undefined ? undefined : readResumeToken(request.resume.after, 'after')
  const start: Keyset = from ? { after: from.position } : {}
  return {
    start,
    resumed: from !== undefined,
    /** The service's refusal of a position that does not fit the order, named as the parameter. */
    renamed: (error: unknown) =>
      withFieldsRenamed(error, (field) => (field.startsWith('keyset.after') ? 'after' : field)),
    /** The rows' tokens, or undefined for an export that is not resumable. */
    tokens(page: Page<ResourceRecord>, withheld: readonly string[]): ResumeTokens | undefined {
      if (!request.resume.resumable) return undefined
      const fields = page.keysetFields ?? []
      const columns = serializedFields(resource)
        .map((field) => field.name)
        .filter((name) => !withheld.includes(name))
      // A token shows its values: a field that no answer carries (filterOnly, hidden) cannot be in one.
      const unshown = fields.filter((name) => !columns.includes(name))
      if (unshown.length) {
        throw badField(
          'resumable',
          `this export is ordered by ${unshown.join(', ')}, which its rows do not show: it cannot be resumed`
        )
      }
      const scope = exportScope({
        resource: resource.name,
        format: mediaType,
        request: { filter: request.filter ?? {}, search: request.search ?? null },
        settings: { dateFormat: request.settings.dateFormat },
        order: { fields, sort: resource.query.defaultSort },
        columns
      })
      if (from && from.scope !== scope) {
        throw badField(
          'after',
          'was made for another export (filter, search, dateFormat, format, order or columns): resume with ' +
            'the parameters the first part was asked with, or start again'
        )
      }
      return resumeTokens(scope, fields)
    }
  }
}
