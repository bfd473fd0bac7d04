import { createHash } from 'node:crypto'

/**
 * A resource's counts (`totalCount`) reused while the application has written nothing since they were read:
 * a dashboard polling a list pays for its page, not for a second scan of every matching row each time. The
 * key holds the filter's shape and values, the caller's scope included, so callers who see different records
 * never share a count. The application's write generation (see `feathers/write-generation.ts`) moves on when
 * any service's write returns and again when its event is emitted after the commit, on every instance
 * feathers-sync connects; writes that bypass the services are not seen (`caching.enabled: false` turns reuse
 * off for such a resource).
 */
export class CountCache {
  private generation = -1
  private readonly counts = new Map<string, number>()

  constructor(
    /** The write generation now, or undefined while counts are not to be reused. */
    private readonly writeGeneration: () => number | undefined,
    private readonly maxEntries = 1000
  ) {}

  async count(key: string, read: () => Promise<number>): Promise<number> {
    const { known, keep } = this.reuse(key)
    if (known !== undefined) return known
    const total = await read()
    keep(total)
    return total
  }

  /**
   * The count kept for `key`, if any, and how to keep the one read now (by a statement of its own, or with
   * the page it counts): `keep` must be called with a count read after this call.
   */
  reuse(key: string): { known?: number; keep(total: number): void } {
    const before = this.writeGeneration()
    if (before === undefined) return { keep: () => {} }
    if (before !== this.generation) {
      this.counts.clear()
      this.generation = before
    }
    return { known: this.counts.get(key), keep: (total) => this.keep(key, total, before) }
  }

  private keep(key: string, total: number, before: number) {
    // A write that returned or committed while the count ran may or may not be in it: not kept.
    if (this.writeGeneration() !== before || this.generation !== before) return
    if (this.counts.size >= this.maxEntries) this.counts.delete(this.counts.keys().next().value!)
    this.counts.set(key, total)
  }
}

/**
 * A count's key: a digest of the filter's shape and bound values, so that a kept count costs the same few bytes
 * however long its filter; none (not reused) for values JSON cannot write.
 */
export function countKey(shape: string, values: readonly unknown[]): string | undefined {
  let written: string
  try {
    written = JSON.stringify(values)
  } catch {
    return undefined
  }
  return createHash('sha256').update(shape).update('|').update(written).digest('base64url')
}
