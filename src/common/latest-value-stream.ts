/**
 * An async iterator of states: a value pushed while the consumer has not taken the previous one replaces it,
 * so a client that reads slowly gets the newest state and the server never holds more than one per stream.
 * `onEnd` runs once, however it ends.
 */
export function latestValueStream<T>(onEnd: () => void) {
  let pending: { value: T } | undefined
  let waiting: ((result: IteratorResult<T>) => void) | undefined
  let ended = false
  let endAfterPending = false
  const end = () => {
    if (ended) return
    ended = true
    pending = undefined
    waiting?.({ value: undefined, done: true })
    waiting = undefined
    onEnd()
  }
  const iterator: AsyncIterableIterator<T> = {
    next() {
      if (pending) {
        const { value } = pending
        pending = undefined
        if (endAfterPending) end()
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
    if (ended || endAfterPending) return
    if (waiting) {
      const resolve = waiting
      waiting = undefined
      resolve({ value, done: false })
    } else {
      pending = { value }
    }
  }
  /** Pushes a last value (an error, say): the stream ends once the consumer has taken it. */
  const finish = (value: T) => {
    if (ended) return
    push(value)
    if (pending) endAfterPending = true
    else end()
  }
  return { iterator, push, finish, end }
}
