/**
 * Values by key, made on first use, the oldest dropped first once `capacity` are kept or once what they weigh
 * (`weigh(value)` plus the key's length) would pass `maxWeight`: what keys exist is up to clients (statement
 * shapes, field selections), so their number and their size are bounded here rather than by trust. A value
 * heavier than `maxWeight` on its own is made for its caller and not kept. A key in use is made again after
 * its eviction; keeping recency would cost every hit a reinsertion.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>()
  private weight = 0

  constructor(
    private readonly capacity = 500,
    private readonly maxWeight = Infinity,
    private readonly weigh: (value: V) => number = () => 0
  ) {}

  /** The value kept for `key`, without making one. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value
  }

  get(key: string, make: () => V): V {
    const kept = this.entries.get(key)
    if (kept !== undefined) return kept.value
    const value = make()
    const weight = key.length + this.weigh(value)
    if (weight > this.maxWeight) return value
    while (this.entries.size >= this.capacity || this.weight + weight > this.maxWeight) {
      const [oldest, entry] = this.entries.entries().next().value!
      this.entries.delete(oldest)
      this.weight -= entry.weight
    }
    this.entries.set(key, { value, weight })
    this.weight += weight
    return value
  }
}
