/**
 * The Feathers app baseline answers in Feathers' own shapes (a page is `{ total, limit, skip, data }`), so its
 * answers cannot be compared byte for byte with the raw handler's. What must be equal is checked here: the
 * same records, in the same order, with the same values, and the same total.
 */
type Json = Record<string, unknown>

/** A record without `age`, which depends on the moment of answering. */
function comparable(record: Json) {
  const entries = Object.entries(record).filter(([key]) => key !== 'age')
  return JSON.stringify(entries.sort(([a], [b]) => a.localeCompare(b)))
}

/** Why the Feathers app's answer differs from the raw handler's, or undefined when it answers the same. */
export function feathersDifference(feathers: Json, raw: Json): string | undefined {
  if (Array.isArray(raw.nodes)) {
    const data = (feathers.data ?? []) as Json[]
    if (feathers.total !== raw.totalCount) return `total ${feathers.total}, raw totalCount ${raw.totalCount}`
    const same =
      data.length === raw.nodes.length &&
      data.every((record, index) => comparable(record) === comparable((raw.nodes as Json[])[index]))
    return same ? undefined : 'the page holds other records'
  }
  return comparable(feathers) === comparable(raw) ? undefined : 'the record differs'
}
