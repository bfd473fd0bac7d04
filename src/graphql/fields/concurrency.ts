/**
 * Runs at most `slots` tasks at once; the others wait in order of arrival. One per GraphQL request bounds
 * the pooled connections the request holds: its waiting service calls queue here rather than in the pool,
 * where they would stand ahead of every other request's statements. (A class: every request makes one.)
 */
export class ConcurrencyLimit {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly slots: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) this.running++
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    try {
      return await task()
    } finally {
      this.release()
    }
  }

  private release() {
    const next = this.waiting.shift()
    // The slot passes to the next task (`running` stays the same) in the event loop's next turn: statements
    // of a synchronous driver (better-sqlite3) chained through promise callbacks would otherwise never let
    // the server read another request until the last of them.
    if (next) setImmediate(next)
    else this.running--
  }
}
