import { isStatistical, type ColumnFunction } from '../model/aggregate'
import { isNumericKind } from './field-kind'
import type { ResolvedField } from './resolved'

export const FILTER_ONLY = 'is filterOnly: it can be filtered on, never read'

/**
 * Why an aggregate function does not apply to a field, or undefined when it does: one rule for the aggregate
 * requests and for sorts by a relation aggregate. `count` of a filterOnly field is allowed (how many records
 * have a value, which a filter on `is: null` tells as well); the other functions return values, which a
 * filterOnly field never gives away.
 */
export function aggregateProblem(fn: ColumnFunction, field: ResolvedField): string | undefined {
  // The spec: non-filterable fields are absent from aggregates (groupBy-only audit columns included).
  if (!field.filterable || field.hidden) return `${field.name} cannot be aggregated`
  if (fn !== 'count' && field.filterOnly) return `${field.name} ${FILTER_ONLY}`
  if ((fn === 'sum' || fn === 'avg' || isStatistical(fn)) && !isNumericKind(field.kind))
    return `${fn} applies to numeric fields only`
  if ((fn === 'min' || fn === 'max') && field.kind === 'boolean') return `${fn} does not apply to booleans`
  return undefined
}
