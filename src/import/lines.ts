import type { FieldError } from '../common/errors'

/** One record of an import as its source read it: its line number, and the record or why it has none. */
export interface ImportLine {
  /** The line the record ends on (1 is a CSV's header), as an editor numbers the file. */
  line: number
  record?: Record<string, unknown>
  errors?: FieldError[]
}

/** What a source knows of the body it reads, for the progress events. */
export interface SourceCounter {
  /** Bytes of the body read so far. */
  bytesRead(): number
}
