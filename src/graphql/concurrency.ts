/**
 * Runs at most `slots` tasks at once; the others wait in order of arrival. One per GraphQL request bounds
 * the pooled connections the request holds: its waiting service calls queue here rather than in the pool,
 * where they would stand ahead of every other request's statements.
 */
export type ConcurrencyLimit = <T>(task: () => Promise<T>) => Promise<T>

export function concurrencyLimit(slots: number): ConcurrencyLimit {
  let running = 0
  const waiting: Array<() => void> = []
  const release = () => {
    const next = waiting.shift()
    // The slot passes to the next task (`running` stays the same) in the event loop's next turn: statements
    // of a synchronous driver (better-sqlite3) chained through promise callbacks would otherwise never let
    // the server read another request until the last of them.
    if (next) setImmediate(next)
    else running--
  }
  return async function limited<T>(task: () => Promise<T>): Promise<T> {
    if (running < slots) running++
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      release()
    }
  }
}
