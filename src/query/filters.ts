import type { ResolvedResource } from '../resource/resolved'
import type { FieldComparison, Filter } from '../model/query'
import { relationFilterKey } from '../resource/relation-quantifiers'

/** No filter, or one whose every key is undefined (`{}` included): it restricts nothing. */
export function isEmptyFilter(filter: Filter | undefined | null): boolean {
  return !filter || Object.values(filter).every((value) => value === undefined)
}

/** ANDs filters together, leaving out empty ones; `undefined` when nothing is left. */
export function andFilters(...filters: Array<Filter | undefined | null>): Filter | undefined {
  const present = filters.filter((filter): filter is Filter => !!filter && !isEmptyFilter(filter))
  if (present.length === 0) return undefined
  if (present.length === 1) return present[0]
  return { and: present }
}

/** A comparison no value satisfies (knex compiles an empty IN list to a false condition). */
const NO_VALUE: FieldComparison = { in: [] }

/** No operator, or an operand that is undefined (or null, except for is/isNot). */
function missesValue(comparison: unknown) {
  if (comparison === undefined || comparison === null) return true
  if (typeof comparison !== 'object' || Array.isArray(comparison)) return false // the compiler refuses it
  const operands = Object.entries(comparison)
  return (
    operands.length === 0 ||
    operands.some(
      ([operator, value]) => value === undefined || (value === null && !['is', 'isNot'].includes(operator))
    )
  )
}

/**
 * An authorization filter read strictly, failing closed. In a client filter a missing value is no condition
 * (GraphQL leaves absent arguments undefined); in an authorization rule it comes from a missing user or an
 * empty list of grants — `{ownerId: {eq: user?.id}}`, `{or: teams.map(...)}` — and would grant everything.
 * Here a comparison missing its value, a field or group set to undefined and an empty `or` match no record;
 * `complete` is false when any of them did. Under `none` and `every` a condition that matches nothing would
 * grant more (no related record matches it), so such a relation filter with anything missing matches nothing.
 */
export function strictFilter(
  filter: Filter,
  resource: ResolvedResource
): { filter: Filter; complete: boolean } {
  let complete = true
  const strict = (rule: Filter, resource: ResolvedResource): Filter => {
    const nothing: Filter = { [resource.idField.name]: NO_VALUE }
    const result: Filter = {}
    let matchesNothing = false
    for (const [key, value] of Object.entries(rule)) {
      if (key === 'and' || key === 'or') {
        const subs = value as Filter[] | undefined | null
        if (
          subs === undefined ||
          subs === null ||
          (key === 'or' && Array.isArray(subs) && subs.length === 0)
        ) {
          complete = false
          result[key] = [nothing]
        } else {
          // Anything but a list of filters is left for the compiler to refuse.
          result[key] = Array.isArray(subs)
            ? subs.map((sub) => {
                if (sub !== undefined && sub !== null) return strict(sub, resource)
                complete = false
                return nothing
              })
            : subs
        }
        continue
      }
      // A relation filter is a rule on the related records, read as strictly.
      const relation = relationFilterKey(resource, key)
      if (relation && value && typeof value === 'object' && !Array.isArray(value)) {
        const completeBefore = complete
        complete = true
        result[key] = strict(value as Filter, relation.relation.target)
        if (!complete && relation.quantifier !== 'some') matchesNothing = true
        complete &&= completeBefore
        continue
      }
      if (missesValue(value)) {
        complete = false
        result[key] = NO_VALUE
      } else {
        result[key] = value
      }
    }
    return matchesNothing ? { and: [result, nothing] } : result
  }
  const result = strict(filter, resource)
  return { filter: result, complete }
}
