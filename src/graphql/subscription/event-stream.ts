/**
 * An async iterator fed by pushes, holding at most `maxQueued` values its consumer has not taken yet. One
 * more is an overflow: `onOverflow` runs (the caller closes the connection) and the stream ends, so a client
 * that does not read cannot make the server hold an unbounded backlog. `onEnd` runs once, however it ends.
 */
export function eventStream<T>(maxQueued: number, onOverflow: () => void, onEnd: () => void) {
  const queued: T[] = []
  let waiting: ((result: IteratorResult<T>) => void) | undefined
  let ended = false
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
      if (queued.length) return Promise.resolve({ value: queued.shift()!, done: false })
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
    if (ended) return
    if (waiting) {
      const resolve = waiting
      waiting = undefined
      resolve({ value, done: false })
    } else if (queued.length < maxQueued) {
      queued.push(value)
    } else {
      onOverflow()
      end()
    }
  }
  return { iterator, push, end }
}
