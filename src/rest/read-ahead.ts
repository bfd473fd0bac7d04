import { randomUUID } from 'node:crypto'
import { open, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable, pipeline } from 'node:stream'

/**
 * The body read ahead of its consumer into a temporary file, at most `limit` bytes ahead of what the consumer
 * has taken; past that, the request is read no faster than it is consumed. An import writes far slower than a
 * client uploads, and Node's `server.requestTimeout` cuts a request whose body has not all arrived in time:
 * read ahead, the upload arrives at the network's pace and that timeout measures the client, as it is meant
 * to, not the database.
 *
 * The consumer reads only bytes whose write to the file has completed, and the end only once the whole body
 * is in the file. (fs-capacitor, which does this, could end its reader early in its last CommonJS release,
 * 6.2: a read that found no bytes, then a write and the end before its callback, made it end without them.)
 * A body that fails (a cut upload, a 413) fails the consumer after the bytes that came before it, never with
 * an end that would make a cut line look whole; a consumer that stops early stops the upload. The file is
 * removed from its folder as soon as it is open (where the system allows; elsewhere when the consumer closes),
 * so that nothing is left behind even by a process that dies.
 *
 * `taken()` is the bytes the consumer has read, for its progress.
 */
export function readAhead(body: Readable, limit: number) {
  const path = join(tmpdir(), `feathers-query-import-${randomUUID()}`)
  const file = open(path, 'wx+', 0o600).then(async (handle) => {
    const removed = await unlink(path).then(
      () => true,
      () => false
    )
    return { handle, removed }
  })
  // Keeps an unhandled rejection away when nothing reads before the failure; the reader reports it.
  file.catch(() => undefined)
  let written = 0
  let taken = 0
  let complete = false
  let failure: Error | undefined
  /** The reader waiting for bytes, the end or a failure. */
  let waiting: (() => void) | undefined
  /** The writer waiting for the reader to fall within `limit`. */
  let held: ((error?: Error | null) => void) | undefined
  const wake = () => {
    const reader = waiting
    waiting = undefined
    reader?.()
  }

  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      file
        .then(({ handle }) => handle.write(chunk, 0, chunk.length, written))
        .then(() => {
          written += chunk.length
          wake()
          if (written - taken > limit) held = done
          else done()
        }, done)
    },
    final(done) {
      complete = true
      wake()
      done()
    },
    destroy(error, done) {
      if (error && !failure) failure = error
      wake()
      done(error)
    }
  })

  const pull = async (size: number) => {
    try {
      for (;;) {
        if (source.destroyed) return
        if (taken < written) {
          const { handle } = await file
          const wanted = Math.min(size, written - taken)
          const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(wanted), 0, wanted, taken)
          taken += bytesRead
          if (held && written - taken <= limit) {
            const writer = held
            held = undefined
            writer()
          }
          source.push(buffer.subarray(0, bytesRead))
          return
        }
        if (failure) return void source.destroy(failure)
        if (complete) return void source.push(null)
        await new Promise<void>((resolve) => (waiting = resolve))
      }
    } catch (error) {
      source.destroy(error as Error)
    }
  }

  const source = new Readable({
    read(size) {
      void pull(size)
    },
    destroy(error, done) {
      // Whether it read to the end or stopped early, the upload is over for it: the rest is not read.
      if (!sink.writableFinished) sink.destroy()
      file
        .then(async ({ handle, removed }) => {
          await handle.close()
          if (!removed) await unlink(path)
        })
        .catch(() => undefined)
        .finally(() => done(error))
    }
  })
  pipeline(body, sink, () => {})
  return { body: source, taken: () => taken }
}
