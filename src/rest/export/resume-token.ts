import { badField } from '../../common/errors'
import { canonicalJson, keysetDigest } from '../../query/keyset-digest'
import type { ResourceRecord } from '../../model/records'

/**
 * Resume tokens of a resumable export (`?resumable=true`): every row carries, in its last column (`$after`),
 * where it stands in the export's order, so that a client cut off after any complete row resumes with
 * `?after=<that row's token>` from what it already holds. Nothing arrives after a cut, so a trailer or a
 * final line could not tell it.
 *
 * A token is `<position>.<scope>`: the base64url JSON of the row's values of the order's fields (sort fields,
 * then the id), as the keyset cursors of GraphQL hold them, and the digest of the export it belongs to. The
 * position starts with `eyJ` (`{"`), so no spreadsheet takes it for a formula, and needs no escaping in a URL
 * or a CSV cell. It carries no authority: the resumed request is read with the caller's own credentials,
 * filter and field rules, and its values are only compared with the sort columns (`query/keyset-digest.ts`).
 */

/** The name of the resume tokens' column (NDJSON: member); `$` keeps it apart from any field's name. */
export const RESUME_COLUMN = '$after'

/** A record's resume token, as the `$after` column holds it. */
export type ResumeTokens = (record: ResourceRecord) => string

/** The separator between a token's position and its scope: not in base64url's alphabet. */
const SEPARATOR = '.'

const TOKEN = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{16}$/

/** What an export's tokens are bound to: a token used with another export is a 400 rather than a gap. */
export interface ExportIdentity {
  resource: string
  /** The media type answered: CSV and NDJSON files do not continue each other. */
  format: string
  /** The client's filter parameters and search, as parsed. */
  request: unknown
  /** Settings that change how a row is written (`dateFormat`). */
  settings: unknown
  /** The order's fields (`keysetFields` of the page) and the sort they come from. */
  order: unknown
  /** The columns the caller gets (its field rules decide). */
  columns: readonly string[]
}

/** The digest of an export's identity: the token's second part. */
export function exportScope(identity: ExportIdentity) {
  return keysetDigest(canonicalJson(identity))
}

/**
 * The tokens of the records of an export of `scope` ordered by `fields`. The position's JSON is written from
 * keys made once and each value's JSON: a token per row costs little beside writing the row.
 */
export function resumeTokens(scope: string, fields: string[]): ResumeTokens {
  const keys = fields.map((name, index) => `${index === 0 ? '{' : ','}${JSON.stringify(name)}:`)
  const suffix = SEPARATOR + scope
  return (record) => {
    let position = ''
    for (let index = 0; index < fields.length; index++) {
      position += keys[index] + (JSON.stringify(record[fields[index]]) ?? 'null')
    }
    return Buffer.from(position + '}', 'utf8').toString('base64url') + suffix
  }
}

/** A token read back: the position (values by field name) and the scope it was made for; a 400 naming `field` when malformed. */
export function readResumeToken(token: unknown, field: string) {
  const invalid = () => badField(field, 'is not a resume token: pass the $after of the last row you received')
  if (typeof token !== 'string' || !TOKEN.test(token)) throw invalid()
  const [encoded, scope] = token.split(SEPARATOR)
  let position: unknown
  try {
    position = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  if (!position || typeof position !== 'object' || Array.isArray(position)) throw invalid()
  return { position: position as Record<string, unknown>, scope }
}
