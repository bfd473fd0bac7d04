import type { ResolvedResource } from '../resource/resolved'
import type { Between, FieldComparison, Filter, Scalar } from '../model/query'

/**
 * Whether a record matches a filter, decided in JavaScript with SQL's meaning (a comparison with NULL is not
 * true; `like` is case-sensitive, `iLike` not, `\` escapes). The database decides every query; this serves
 * only where there is no statement to run: which real-time connections may see an event's record. With
 * `complete`, a comparison on a field the record does not carry is false (what it would hold is unknown);
 * otherwise the field reads as null.
 */
export function matchesFilter(
  resource: ResolvedResource,
  record: Record<string, unknown>,
  filter: Filter,
  complete = false
): boolean {
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined) continue
    if (key === 'and') {
      if (!(value as Filter[]).every((sub) => matchesFilter(resource, record, sub, complete))) return false
    } else if (key === 'or') {
      if (!(value as Filter[]).some((sub) => matchesFilter(resource, record, sub, complete))) return false
    } else {
      const kind = resource.fieldMap.get(key)?.kind
      if (!kind || (complete && !(key in record))) return false
      if (!matchesComparison(kind, record[key], value as FieldComparison)) return false
    }
  }
  return true
}

/** Comparable form of a value: dates as epoch milliseconds, everything else as it is. */
function comparable(kind: string, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (kind === 'date') return value instanceof Date ? value.getTime() : Date.parse(String(value))
  if (kind === 'integer' || kind === 'number') return Number(value)
  if (kind === 'string') return String(value)
  return value
}

function likePattern(pattern: string, caseInsensitive: boolean) {
  let source = ''
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]
    if (char === '\\' && index + 1 < pattern.length) source += escapeRegExp(pattern[++index])
    else if (char === '%') source += '[\\s\\S]*'
    else if (char === '_') source += '[\\s\\S]'
    else source += escapeRegExp(char)
  }
  return new RegExp(`^${source}$`, caseInsensitive ? 'iu' : 'u')
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

function matchesComparison(kind: string, raw: unknown, comparison: FieldComparison): boolean {
  const value = comparable(kind, raw)
  const operand = (scalar: Scalar) => comparable(kind, scalar) as number | string | boolean
  for (const [operator, argument] of Object.entries(comparison)) {
    if (argument === undefined) continue
    if (operator === 'is' || operator === 'isNot') {
      const is = argument === null ? value === null : value === argument
      if (operator === 'is' ? !is : is) return false
      continue
    }
    // Every other comparison with NULL is unknown, which a WHERE clause does not keep.
    if (value === null) return false
    const current = value as number | string | boolean
    switch (operator) {
      case 'eq':
        if (current !== operand(argument as Scalar)) return false
        break
      case 'neq':
        if (current === operand(argument as Scalar)) return false
        break
      case 'gt':
        if (!(current > operand(argument as Scalar))) return false
        break
      case 'gte':
        if (!(current >= operand(argument as Scalar))) return false
        break
      case 'lt':
        if (!(current < operand(argument as Scalar))) return false
        break
      case 'lte':
        if (!(current <= operand(argument as Scalar))) return false
        break
      case 'in':
        if (!(argument as Scalar[]).some((item) => operand(item) === current)) return false
        break
      case 'notIn':
        if ((argument as Scalar[]).some((item) => operand(item) === current)) return false
        break
      case 'between':
      case 'notBetween': {
        const { lower, upper } = argument as Between
        const inside = current >= operand(lower) && current <= operand(upper)
        if (operator === 'between' ? !inside : inside) return false
        break
      }
      case 'like':
      case 'notLike':
      case 'iLike':
      case 'notILike': {
        const matched = likePattern(argument as string, operator === 'iLike' || operator === 'notILike').test(
          String(current)
        )
        if (operator.startsWith('not') ? matched : !matched) return false
        break
      }
      default:
        return false
    }
  }
  return true
}
