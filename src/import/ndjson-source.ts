import { BadRequest } from '@feathersjs/errors'
import type { Readable } from 'node:stream'
import type { ImportColumns } from './columns'
import type { ImportLine } from './lines'

const NEWLINE = 0x0a

/** One NDJSON line's record: an object, without the members an export writes that a create does not take. */
function lineOf(text: string, line: number, columns: ImportColumns): ImportLine {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { line, errors: [{ field: 'line', message: `is not JSON (${(error as Error).message})` }] }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { line, errors: [{ field: 'line', message: 'must be a JSON object' }] }
  }
  const record = value as Record<string, unknown>
  for (const name of Object.keys(record)) if (columns.leftOut(name)) delete record[name]
  return { line, record }
}

/**
 * The records of an NDJSON body: one JSON object per line (`\n`, a `\r` before it allowed), blank lines
 * skipped, members with the JSON types a create body has. A line that is not a JSON object fails alone.
 */
export async function* ndjsonLines(
  body: Readable,
  columns: ImportColumns,
  maxLineBytes: number
): AsyncGenerator<ImportLine> {
  let pending: Buffer = Buffer.alloc(0)
  let line = 0
  const tooLong = () =>
    new BadRequest(`Line ${line + 1}: longer than the import's maxLineBytes`, { line: line + 1 })
  for await (const chunk of body) {
    let buffer: Buffer = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer)
    let start = 0
    for (let end = buffer.indexOf(NEWLINE); end !== -1; end = buffer.indexOf(NEWLINE, start)) {
      if (end - start > maxLineBytes) throw tooLong()
      line++
      const text = buffer.toString('utf8', start, end).trim()
      if (text) yield lineOf(text, line, columns)
      start = end + 1
    }
    buffer = buffer.subarray(start)
    if (buffer.length > maxLineBytes) throw tooLong()
    pending = buffer
  }
  const text = pending.toString('utf8').trim()
  if (text) yield lineOf(text, line + 1, columns)
}
