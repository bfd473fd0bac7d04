import type { Filter } from './model'

export function isEmptyFilter(filter: Filter | undefined | null): filter is undefined {
  return !filter || Object.values(filter).every((value) => value === undefined)
}

/** ANDs filters together, leaving out empty ones; `undefined` when nothing is left. */
export function andFilters(...filters: Array<Filter | undefined | null>): Filter | undefined {
  const present = filters.filter((filter): filter is Filter => !isEmptyFilter(filter))
  if (present.length === 0) return undefined
  if (present.length === 1) return present[0]
  return { and: present }
}
