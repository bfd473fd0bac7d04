// fs-capacitor 6 is the last release a CommonJS package can require (7 and 8 are ES modules only), and it
// ships no types: these are the parts the import's read-ahead uses.
declare module 'fs-capacitor' {
  import { Readable, Writable } from 'node:stream'

  /** A writable whose bytes go to a temporary file that every read stream reads from the start. */
  export class WriteStream extends Writable {
    /** A reader that follows the writes and ends when the writer has finished and it read everything. */
    createReadStream(options?: { highWaterMark?: number }): Readable
    /** No more readers: the file is removed once the last reader has closed. */
    release(): void
  }
}
