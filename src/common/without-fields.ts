/**
 * A function answering a record without the properties `names`: a copy with every other property, or the
 * record itself when it holds none of them (and anything that is not an object as it is).
 */
export function withoutFields(names: readonly string[]) {
  if (names.length === 0) return <T>(record: T) => record
  const removed = new Set(names)
  return <T>(record: T): T => {
    if (!record || typeof record !== 'object' || !names.some((name) => name in record)) return record
    const kept: Record<string, unknown> = {}
    for (const key of Object.keys(record))
      if (!removed.has(key)) kept[key] = (record as Record<string, unknown>)[key]
    return kept as T
  }
}
