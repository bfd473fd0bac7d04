import { AGGREGATE_FUNCTIONS, isCounting, type AggregateSortField } from '../model/aggregate'
import type { GroupColumn } from './plan-columns'
import type { RequestChecker } from './request-checker'

/** One ORDER BY term over the aggregated rows, by alias. */
export interface OrderTerm {
  alias: string
  direction: 'ASC' | 'DESC'
  nullsFirst: boolean
  nullable: boolean
}

function term(alias: string, nullable: boolean, direction: 'ASC' | 'DESC', nulls?: string): OrderTerm {
  // As in record sorting, NULLs are the smallest value unless told otherwise.
  const nullsFirst = nulls ? nulls === 'NULLS_FIRST' : direction === 'ASC'
  return { alias, direction, nullsFirst, nullable }
}

/** A related record's key is NULL where the record has none the caller may read, whatever the field. */
const nullableKey = (group: GroupColumn) => group.relations !== undefined || group.field.nullable

/**
 * `sorting`: by group keys (`{field}`) and aggregates (`{field, aggregate}`), then by every group key
 * ascending (NULLs first) that the sorting left out. Group keys are unique per group, so the order is total:
 * groups that tie on the requested terms keep one order, and pages of them neither repeat nor skip a group.
 */
export function planOrder(check: RequestChecker, groups: GroupColumn[], sorting: unknown): OrderTerm[] {
  const terms: OrderTerm[] = []
  const sorted = new Set<GroupColumn>()
  const entries = sorting === undefined || sorting === null ? [] : sorting
  if (!Array.isArray(entries)) check.problem('sorting', 'must be a list')
  else {
    entries.forEach((entry: AggregateSortField, index) => {
      const path = `sorting.${index}`
      if (!entry || typeof entry !== 'object')
        return check.problem(path, 'must be {field, aggregate?, direction, nulls?}')
      const { field, aggregate, direction, nulls, ...rest } = entry
      for (const key of Object.keys(rest)) check.problem(`${path}.${key}`, 'is not part of a sort entry')
      if (direction !== 'ASC' && direction !== 'DESC')
        return check.problem(`${path}.direction`, 'must be ASC or DESC')
      if (nulls !== undefined && nulls !== null && nulls !== 'NULLS_FIRST' && nulls !== 'NULLS_LAST') {
        return check.problem(`${path}.nulls`, 'must be NULLS_FIRST or NULLS_LAST')
      }
      if (aggregate !== undefined && aggregate !== null) {
        if (!AGGREGATE_FUNCTIONS.includes(aggregate)) {
          return check.problem(`${path}.aggregate`, `must be one of ${AGGREGATE_FUNCTIONS.join(', ')}`)
        }
        const column = check.column(aggregate, field, `${path}.field`)
        if (column) terms.push(term(column.alias, !isCounting(aggregate), direction, nulls ?? undefined))
        return
      }
      const group = groups.find((candidate) => candidate.name === field)
      if (!group) {
        return check.problem(
          `${path}.field`,
          `sorts by a group key or an aggregate: "${field}" is not grouped by`
        )
      }
      sorted.add(group)
      terms.push(term(group.alias, nullableKey(group), direction, nulls ?? undefined))
    })
  }
  for (const group of groups) if (!sorted.has(group)) terms.push(term(group.alias, nullableKey(group), 'ASC'))
  return terms
}
