/**
 * Values by key, made on first use, the oldest dropped first once `capacity` are kept: what keys exist is up
 * to clients (statement shapes, field selections), so their number is bounded here rather than by trust. A
 * key in use is made again after its eviction; keeping recency would cost every hit a reinsertion.
 */
export class BoundedCache<V> {
  private readonly values = new Map<string, V>()

  constructor(private readonly capacity = 500) {}

  get(key: string, make: () => V): V {
    let value = this.values.get(key)
    if (value === undefined) {
      value = make()
      if (this.values.size >= this.capacity) this.values.delete(this.values.keys().next().value!)
      this.values.set(key, value)
    }
    return value
  }
}
