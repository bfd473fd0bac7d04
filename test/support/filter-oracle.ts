/**
 * What a read of the example's todo items must answer, computed from the records the test seeded, without any
 * of the plugin's code: the rules the README and the GraphQL schema state for each operator, written again
 * in plain TypeScript. The hostile corpus compares every read the server answered with what this computes.
 */

export interface OracleItem {
  id: number
  title: string
  description: string | null
  completed: boolean
  priority: number
  /** Milliseconds since the epoch. */
  created: number
  updated: number
}

/** The request is not a valid read: the server must refuse it, and has nothing to compare. */
export class Refused extends Error {}

type FieldType = 'id' | 'string' | 'boolean' | 'number' | 'date'

const FIELD_TYPES: Record<string, FieldType> = {
  id: 'id',
  title: 'string',
  description: 'string',
  completed: 'boolean',
  priority: 'number',
  created: 'date',
  updated: 'date'
}

type Value = string | number | boolean

function refuse(why: string): never {
  throw new Refused(why)
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/

/** A strict RFC 3339 date-time, as milliseconds; a day that does not exist is refused. */
function dateTime(text: string): number {
  const parts = ISO_DATE_TIME.exec(text)
  if (!parts) refuse(`not a date-time: ${text.slice(0, 40)}`)
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number)
  const calendar = new Date(Date.UTC(year, month - 1, day))
  const exists =
    calendar.getUTCFullYear() === year &&
    calendar.getUTCMonth() === month - 1 &&
    calendar.getUTCDate() === day
  if (!exists || hour > 23 || minute > 59 || second > 59) refuse(`no such date-time: ${text}`)
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) refuse(`not a date-time: ${text}`)
  return ms
}

/** An id as GraphQL's ID type and the integer key read it: the digits of a safe integer. */
function integerId(value: unknown): number {
  const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : value
  if (typeof text !== 'string' || !/^-?\d+$/.test(text)) refuse(`not an integer id: ${String(value)}`)
  const id = Number(text)
  if (!Number.isSafeInteger(id)) refuse(`id out of range: ${text}`)
  return id
}

/** A filter's value for a field of `type`, as GraphQL's input coercion and the plugin's parsing read it. */
function scalar(type: FieldType, value: unknown): Value {
  if (value === null || value === undefined) refuse('null where a value is needed')
  switch (type) {
    case 'id':
      return integerId(value)
    case 'string':
      if (typeof value !== 'string') refuse('not a string')
      return value
    case 'boolean':
      if (typeof value !== 'boolean') refuse('not a boolean')
      return value
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) refuse('not a number')
      return value
    case 'date':
      if (typeof value !== 'string') refuse('not a date-time string')
      return dateTime(value)
  }
}

function codePoints(text: string) {
  return Array.from(text, (character) => character.codePointAt(0)!)
}

/** Strings by code point (the example's binary and "C" collations), numbers and dates by value. */
function compare(left: Value, right: Value): number {
  if (typeof left === 'string' && typeof right === 'string') {
    const a = codePoints(left)
    const b = codePoints(right)
    for (let index = 0; index < Math.min(a.length, b.length); index++) {
      if (a[index] !== b[index]) return a[index] - b[index]
    }
    return a.length - b.length
  }
  return Number(left) - Number(right)
}

const foldAscii = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())

type PatternToken = { any: true } | { one: true } | { literal: string }

/** `%` any run, `_` one character, a backslash makes the next character literal; a lone one at the end is refused. */
function patternTokens(pattern: string): PatternToken[] {
  const characters = Array.from(pattern)
  const tokens: PatternToken[] = []
  for (let index = 0; index < characters.length; index++) {
    const character = characters[index]
    if (character === '\\') {
      if (index === characters.length - 1) refuse('a pattern ending in a lone backslash')
      tokens.push({ literal: characters[++index] })
    } else if (character === '%') tokens.push({ any: true })
    else if (character === '_') tokens.push({ one: true })
    else tokens.push({ literal: character })
  }
  return tokens
}

/** Whether `text` matches the tokens: a table of which prefixes of the text each prefix of the pattern matches. */
function matchesPattern(text: string, tokens: PatternToken[], fold: boolean): boolean {
  const characters = Array.from(fold ? foldAscii(text) : text)
  let reachable = new Array<boolean>(characters.length + 1).fill(false)
  reachable[0] = true
  for (const token of tokens) {
    const next = new Array<boolean>(characters.length + 1).fill(false)
    if ('any' in token) {
      let seen = false
      for (let at = 0; at <= characters.length; at++) next[at] = seen = seen || reachable[at]
    } else {
      const literal = 'literal' in token ? (fold ? foldAscii(token.literal) : token.literal) : undefined
      for (let at = 0; at < characters.length; at++) {
        if (reachable[at] && (literal === undefined || characters[at] === literal)) next[at + 1] = true
      }
    }
    reachable = next
  }
  return reachable[characters.length]
}

function asList(value: unknown): unknown[] {
  // GraphQL reads a single value where a list is expected as a list of one.
  if (value === null || value === undefined) refuse('null list')
  return Array.isArray(value) ? value : [value]
}

/** The test of one `{ operator: value }` on a field; `undefined` (NULL) never passes a comparison. */
function comparison(field: string, operator: string, value: unknown): (item: OracleItem) => boolean {
  const type = FIELD_TYPES[field] ?? refuse(`not a filterable field: ${field}`)
  const read = (item: OracleItem) => item[field as keyof OracleItem] as Value | null
  const ordered = (test: (order: number) => boolean) => {
    const bound = scalar(type, value)
    return (item: OracleItem) => {
      const stored = read(item)
      return stored !== null && test(compare(stored, bound))
    }
  }
  switch (operator) {
    case 'eq':
      return ordered((order) => order === 0)
    case 'neq':
      return ordered((order) => order !== 0)
    case 'gt':
      return ordered((order) => order > 0)
    case 'gte':
      return ordered((order) => order >= 0)
    case 'lt':
      return ordered((order) => order < 0)
    case 'lte':
      return ordered((order) => order <= 0)
    case 'is':
    case 'isNot': {
      if (value !== null && typeof value !== 'boolean') refuse('is takes true, false or null')
      if (value !== null && type !== 'boolean') refuse('is true/false on a field that is not boolean')
      const test = (item: OracleItem) => (value === null ? read(item) === null : read(item) === value)
      // NULL is neither true nor false: `isNot: true` is false or NULL.
      return operator === 'is' ? test : (item) => !test(item)
    }
    case 'like':
    case 'notLike':
    case 'iLike':
    case 'notILike': {
      if (type !== 'string' && type !== 'id') refuse(`${operator} on a ${type} field`)
      if (typeof value !== 'string' && !(type === 'id' && typeof value === 'number')) refuse('not a pattern')
      const tokens = patternTokens(String(value))
      const fold = operator === 'iLike' || operator === 'notILike'
      const negated = operator.startsWith('not')
      return (item) => {
        const stored = read(item)
        if (stored === null) return false
        return matchesPattern(String(stored), tokens, fold) !== negated
      }
    }
    case 'in':
    case 'notIn': {
      if (type === 'boolean') refuse(`${operator} on a boolean field`)
      const values = asList(value).map((member) => scalar(type, member))
      const negated = operator === 'notIn'
      // SQL's `NOT IN` an empty set holds for every value, NULL included.
      if (negated && values.length === 0) return () => true
      return (item) => {
        const stored = read(item)
        if (stored === null) return false
        return values.some((member) => compare(stored, member) === 0) !== negated
      }
    }
    case 'between':
    case 'notBetween': {
      if (type === 'boolean') refuse(`${operator} on a boolean field`)
      if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('not a range')
      const range = value as { lower?: unknown; upper?: unknown }
      if (Object.keys(range).some((key) => key !== 'lower' && key !== 'upper')) refuse('unknown range key')
      const lower = scalar(type, range.lower)
      const upper = scalar(type, range.upper)
      const negated = operator === 'notBetween'
      return (item) => {
        const stored = read(item)
        if (stored === null) return false
        return (compare(stored, lower) >= 0 && compare(stored, upper) <= 0) !== negated
      }
    }
    default:
      return refuse(`unknown operator ${operator}`)
  }
}

/** The test a GraphQL `TodoItemFilter` stands for: its fields ANDed, `and` and `or` lists of filters. */
export function filterTest(filter: unknown): (item: OracleItem) => boolean {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) refuse('not a filter')
  const tests: Array<(item: OracleItem) => boolean> = []
  for (const [key, value] of Object.entries(filter)) {
    if (key === 'and' || key === 'or') {
      const members = asList(value).map(filterTest)
      tests.push(
        key === 'and'
          ? (item) => members.every((member) => member(item))
          : (item) => members.some((member) => member(item))
      )
      continue
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(`not operators: ${key}`)
    for (const [operator, operand] of Object.entries(value)) tests.push(comparison(key, operator, operand))
  }
  return (item) => tests.every((test) => test(item))
}

/** The ids a GraphQL filter selects, ascending. */
export function graphqlFilterIds(items: readonly OracleItem[], filter: unknown): number[] {
  const test = filterTest(filter)
  return items
    .filter(test)
    .map((item) => item.id)
    .sort((a, b) => a - b)
}

/** REST's own page parameters: `limit` 1..maxResultsSize and `offset` from 0, integers written in digits. */
function pageParameter(name: string, text: string, largest: number) {
  if (!/^\d+$/.test(text)) refuse(`${name} is not a whole number: ${text.slice(0, 40)}`)
  const value = Number(text)
  if (name === 'limit' && (value < 1 || value > largest)) refuse(`limit out of range: ${text}`)
  if (!Number.isSafeInteger(value)) refuse(`${name} out of range`)
  return value
}

/** A REST equality's text read as its field's type. */
function restValue(type: FieldType, text: string): Value {
  switch (type) {
    case 'id':
      return integerId(text)
    case 'string':
      return text
    case 'boolean':
      if (text !== 'true' && text !== 'false') refuse(`not a boolean: ${text.slice(0, 40)}`)
      return text === 'true'
    case 'number': {
      if (!/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) refuse(`not a number: ${text.slice(0, 40)}`)
      const number = Number(text)
      if (!Number.isFinite(number)) refuse(`not a finite number: ${text.slice(0, 40)}`)
      return number
    }
    case 'date':
      return dateTime(text)
  }
}

export interface RestPage {
  ids: number[]
  totalCount: number
}

/**
 * What `GET /todo-items?...` answers for equality filters and paging (records by id, 25 a page by default):
 * undefined when the request holds a parameter this oracle does not model (sorting, search).
 */
export function restListPage(
  items: readonly OracleItem[],
  parameters: ReadonlyArray<[string, string]>,
  maxResultsSize: number
): RestPage | undefined {
  let limit = 25
  let offset = 0
  const tests: Array<(item: OracleItem) => boolean> = []
  const names = parameters.map(([name]) => name)
  if (new Set(names).size !== names.length) return undefined
  for (const [name, text] of parameters) {
    if (name === 'limit' || name === 'offset') {
      const value = pageParameter(name, text, maxResultsSize)
      if (name === 'limit') limit = value
      else offset = value
      continue
    }
    const type = FIELD_TYPES[name]
    if (!type) return undefined
    const wanted = restValue(type, text)
    tests.push((item) => {
      const stored = item[name as keyof OracleItem] as Value | null
      return stored !== null && compare(stored, wanted) === 0
    })
  }
  const matching = items
    .filter((item) => tests.every((test) => test(item)))
    .map((item) => item.id)
    .sort((a, b) => a - b)
  return { ids: matching.slice(offset, offset + limit), totalCount: matching.length }
}
