import { recordSerializer } from '../../resource/codec'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { RESUME_COLUMN, type ResumeTokens } from './resume-token'

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
    ? (record: ResourceRecord) => JSON.stringify({ ...serialize(record), [RESUME_COLUMN]: tokens(record) })
    : (record: ResourceRecord) => JSON.stringify(serialize(record))
  return (records: ResourceRecord[]) => {
    let text = ''
    for (const record of records) text += line(record) + '\n'
    return text
  }
}
