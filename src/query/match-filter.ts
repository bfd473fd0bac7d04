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
      // A relation filter (`R`, `RNone`, `REvery`) is no field: the record alone cannot answer it, and an
      // event's admission fails closed rather than guess (`REvery: {}`, true of every record, included).
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

/** `_` in a LIKE pattern: any one character. */
const ANY_ONE = null

type Segment = Array<string | typeof ANY_ONE>

/**
 * A LIKE pattern as a matcher that takes time linear in the text for a given pattern, whatever the pattern:
 * the pattern splits at each `%` into segments; the first must start the text, the last end it, and each one
 * between is taken at its leftmost place after the one before (which never loses a match, since `%` takes
 * any run). A backtracking regular expression would take exponential time on `%a%a%a%a%b`.
 */
function likeMatcher(pattern: string, caseInsensitive: boolean): (text: string) => boolean {
  const fold = (text: string) => (caseInsensitive ? text.toLowerCase() : text)
  const segments: Segment[] = [[]]
  const characters = Array.from(pattern)
  for (let index = 0; index < characters.length; index++) {
    const character = characters[index]
    if (character === '\\' && index + 1 < characters.length) segments.at(-1)!.push(fold(characters[++index]))
    else if (character === '%') segments.push([])
    else segments.at(-1)!.push(character === '_' ? ANY_ONE : fold(character))
  }
  return (raw) => {
    const text = Array.from(fold(raw))
    const [first, ...rest] = segments
    if (rest.length === 0) return text.length === first.length && segmentAt(first, text, 0)
    const last = rest.pop()!
    const end = text.length - last.length
    if (end < first.length || !segmentAt(first, text, 0) || !segmentAt(last, text, end)) return false
    let position = first.length
    for (const segment of rest) {
      while (position + segment.length <= end && !segmentAt(segment, text, position)) position++
      if (position + segment.length > end) return false
      position += segment.length
    }
    return true
  }
}

function segmentAt(segment: Segment, text: string[], start: number) {
  for (let index = 0; index < segment.length; index++) {
    if (segment[index] !== ANY_ONE && segment[index] !== text[start + index]) return false
  }
  return true
}

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
    // Outside an empty list is every value, NULL included (as in SQL); every other comparison with NULL is
    // unknown, which a WHERE clause does not keep.
    if (operator === 'notIn' && (argument as Scalar[]).length === 0) continue
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
        const caseInsensitive = operator === 'iLike' || operator === 'notILike'
        const matched = likeMatcher(argument as string, caseInsensitive)(String(current))
        if (operator.startsWith('not') ? matched : !matched) return false
        break
      }
      default:
        return false
    }
  }
  return true
}
