import { recordSerializer } from '../../resource/codec'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { RESUME_COLUMN, type ResumeTokens } from './resume-token'

/** The token's member name and colon; a token is base64url and a dot: nothing in it needs escaping. */
const TOKEN_MEMBER = `${JSON.stringify(RESUME_COLUMN)}:`

/**
 * The NDJSON of an export, one page of records at a time: one JSON object per line, `\n` after each, with
 * the CSV's columns as members in the same order (a value the record lacks is null, so every line has
 * them all). Values keep their JSON types: text stays text (`"007"`), dates are ISO 8601 UTC strings.
 * Nothing before the first line: no header, and no byte order mark, which JSON text must not start with.
 * A resumable export's lines end with the member `$after`, the line's resume token.
 */
export function ndjsonPageEncoder(
  resource: ResolvedResource,
  _settings?: unknown,
  _withheld?: unknown,
  tokens?: ResumeTokens
) {
  const serialize = recordSerializer(resource)
  const line = tokens
    ? // Written into the line's text: a copy of each record with one more member would cost more.
      (record: ResourceRecord) =>
        `${JSON.stringify(serialize(record)).slice(0, -1)},${TOKEN_MEMBER}"${tokens(record)}"}`
    : (record: ResourceRecord) => JSON.stringify(serialize(record))
  return (records: ResourceRecord[]) => {
    let text = ''
    for (const record of records) text += line(record) + '\n'
    return text
  }
}
