import { WriteStream } from 'fs-capacitor'
import { Transform, pipeline, type Readable } from 'node:stream'

/**
 * The body read ahead of its consumer into a temporary file, at most `limit` bytes ahead of what the consumer
 * has taken; past that, the request is read no faster than it is consumed. An import writes far slower than a
 * client uploads, and Node's `server.requestTimeout` cuts a request whose body has not all arrived in time:
 * read ahead, the upload arrives at the network's pace and that timeout measures the client, as it is meant
 * to, not the database. The file is removed when the consumer closes its stream, whether it read to the end
 * or stopped early; a consumer that stops early stops the upload too.
 *
 * `taken()` is the bytes the consumer has read, for its progress.
 */
export function readAhead(body: Readable, limit: number) {
  const file = new WriteStream()
  const reader = file.createReadStream()
  // The file goes as soon as its only reader closes.
  file.release()
  let given = 0
  let taken = 0
  let held: (() => void) | undefined
  const gate = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const pass = () => {
        given += chunk.length
        done(null, chunk)
      }
      if (given - taken <= limit) pass()
      else held = pass
    }
  })
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      taken += chunk.length
      if (held && given - taken <= limit) {
        const pass = held
        held = undefined
        pass()
      }
      done(null, chunk)
    }
  })
  // The writing side ends early (a cut upload, a 413) by destroying the file, and so its reader with the
  // error; the reading side closing early destroys the file, which stops the writing side.
  pipeline(body, gate, file, () => {})
  const taking = pipeline(reader, counter, () => {}) as Readable
  return { body: taking, taken: () => taken }
}
