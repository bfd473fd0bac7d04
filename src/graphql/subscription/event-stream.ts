/**
 * An async iterator fed by pushes, holding at most `maxQueued` values its consumer has not taken yet. When
 * one more comes, `whenFull` decides: `'replace'` drops the oldest queued value for it (a stream of states,
 * where only the newest matters), a function is an overflow: it runs (the caller closes the connection) and
 * the stream ends, so a client that does not read cannot make the server hold an unbounded backlog. `onEnd`
 * runs once, however it ends.
 */
export function eventStream<T>(maxQueued: number, whenFull: 'replace' | (() => void), onEnd: () => void) {
  const queued: T[] = []
  let waiting: ((result: IteratorResult<T>) => void) | undefined
  let ended = false
  /** `finish` was called: the stream ends once its consumer took what is queued. */
  let finishing = false
  const end = () => {
    if (ended) return
    ended = true
    queued.length = 0
    waiting?.({ value: undefined, done: true })
    waiting = undefined
    onEnd()
  }
  const iterator: AsyncIterableIterator<T> = {
    next() {
      if (queued.length) {
        const value = queued.shift()!
        if (finishing && queued.length === 0) end()
        return Promise.resolve({ value, done: false })
      }
      if (ended) return Promise.resolve({ value: undefined, done: true })
      return new Promise((resolve) => (waiting = resolve))
    },
    return() {
      end()
      return Promise.resolve({ value: undefined, done: true })
    },
    throw(error?: unknown) {
      end()
      return Promise.reject(error)
    },
    [Symbol.asyncIterator]() {
      return iterator
    }
  }
  const push = (value: T) => {
    if (ended || finishing) return
    if (waiting) {
      const resolve = waiting
      waiting = undefined
      resolve({ value, done: false })
    } else if (queued.length < maxQueued) {
      queued.push(value)
    } else if (whenFull === 'replace') {
      queued.shift()
      queued.push(value)
    } else {
      whenFull()
      end()
    }
  }
  /** Pushes a last value (an error, say): the stream ends once the consumer has taken it. */
  const finish = (value: T) => {
    if (ended || finishing) return
    push(value)
    if (queued.length) finishing = true
    else end()
  }
  return { iterator, push, finish, end }
}
