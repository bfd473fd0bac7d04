import { recordSerializer } from '../../resource/codec'
import type { ResolvedResource } from '../../resource/resolved'

/**
 * The NDJSON of an export, one page of records at a time: one JSON object per line, `\n` after each, with
 * the CSV's columns as members in the same order (a value the record lacks is null, so every line has
 * them all). Values keep their JSON types: text stays text (`"007"`), dates are ISO 8601 UTC strings.
 * Nothing before the first line: no header, and no byte order mark, which JSON text must not start with.
 */
export function ndjsonPageEncoder(resource: ResolvedResource) {
  const serialize = recordSerializer(resource)
  return (records: Array<Record<string, unknown>>) => {
    let text = ''
    for (const record of records) text += JSON.stringify(serialize(record)) + '\n'
    return text
  }
}
