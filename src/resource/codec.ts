import { badField } from '../common/errors'
import type { FieldKind } from './field-kind'
import { DATE_RANGE, isoDate, isStorableDate, parseIsoDate } from './iso-date'
import { serializedFields, type ResolvedField, type ResolvedResource } from './resolved'

/**
 * Conversions between what drivers return or accept and the record representation every surface shares:
 * dates as ISO 8601 UTC strings, booleans as booleans, numbers as numbers, on SQLite and MySQL alike.
 */

function decodeDate(value: unknown): string | null {
  // better-sqlite3 stores dates as epoch milliseconds (knex binds Date objects with valueOf()).
  if (typeof value === 'number') return isoDate(value)
  if (value instanceof Date) return isoDate(value.getTime())
  if (typeof value === 'bigint') return isoDate(Number(value))
  if (typeof value === 'string') {
    const time = /^-?\d+$/.test(value) ? Number(value) : Date.parse(value.includes('T') ? value : value + 'Z')
    return Number.isNaN(time) ? value : isoDate(time)
  }
  return null
}

/** What each kind's values come back from the drivers as, to the record's representation; null stays null. */
const decoders: Record<FieldKind, (value: unknown) => unknown> = {
  boolean: (value) =>
    value === null || value === undefined
      ? null
      : value === true || value === 1 || value === '1' || value === 'true',
  integer: (value) => (value === null || value === undefined ? null : Number(value)),
  number: (value) => (value === null || value === undefined ? null : Number(value)),
  date: (value) => (value === null || value === undefined ? null : decodeDate(value)),
  string: (value) =>
    value === null || value === undefined
      ? null
      : Buffer.isBuffer(value)
        ? value.toString('utf8')
        : String(value)
}

export function decodeValue(kind: FieldKind, value: unknown): unknown {
  return decoders[kind](value)
}

/** A property name as JavaScript source: JSON quoting is a valid string literal for any name. */
const property = (name: string) => JSON.stringify(name)

/**
 * A function that makes one record per call, compiled once per field list: `fields` are the record's
 * properties in order, each with the expression of its value (which reads the function's one argument,
 * `input`); `computed` are statements run on the made `record`, and `parameters` the values both may use.
 *
 * Records are made by a constructor, not from an object literal: every record of a page then has the same
 * shape, and V8 never pretenures a constructor's objects, where an object literal's allocation site would
 * send every later record to the old generation (docs/design-notes.md, "Records made by a constructor").
 * Its prototype is Object.prototype: records stay plain objects to hooks and to every library.
 */
function compileRecordFunction(
  name: string,
  fields: ReadonlyArray<readonly [string, string]>,
  computed: readonly string[],
  parameters: Record<string, unknown>
): RowDecoder {
  const assignments = fields.map(([field, value]) => `this[${property(field)}] = ${value};`)
  const body = `
    function Record(input) {
      ${assignments.join('\n')}
    }
    Record.prototype = Object.prototype;
    return function ${name}(input) {
      const record = new Record(input);
      ${computed.join('\n')}
      return record;
    }`
  const factory = new Function(...Object.keys(parameters), body) as (...values: unknown[]) => RowDecoder
  return factory(...Object.values(parameters))
}

export type RowDecoder = (row: Record<string, unknown>) => Record<string, unknown>

/**
 * Decodes database rows into records: the stored fields the statement read, then (when asked) the computed
 * fields, which may read any of them.
 */
export function rowDecoder(
  stored: readonly ResolvedField[],
  computed: readonly ResolvedField[] = []
): RowDecoder {
  const parameters: Record<string, unknown> = {}
  stored.forEach((field, index) => (parameters[`decode${index}`] = decoders[field.kind]))
  computed.forEach((field, index) => (parameters[`compute${index}`] = field.computed))
  return compileRecordFunction(
    'decodeRow',
    stored.map((field, index) => [field.name, `decode${index}(input[${property(field.column)}])`] as const),
    computed.map((field, index) => `record[${property(field.name)}] = compute${index}(record) ?? null;`),
    parameters
  )
}

/** What the drivers bind. */
export type DbValue = string | number | boolean | Date | null

/** Decimal digits: `1e0`, `0x1`, `1.0`, `+1` or ` 1 ` are not the integer 1. */
const INTEGER_TEXT = /^-?\d+$/
/** JSON's numbers: no hex or binary, no blanks, no bare dot, no Infinity. */
const NUMBER_TEXT = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i

/**
 * A number written as text (a query string, an id in a path) in a field of `kind`, or NaN: the one reading of
 * numbers for every path, so that `?id=0x4` is refused as `/todo-items/0x4` is.
 */
export function parseNumber(kind: 'integer' | 'number', text: string): number {
  return (kind === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(text) ? Number(text) : NaN
}

/** A UTF-16 surrogate without its pair: no database stores it as it is, nor the same way as another. */
const LONE_SURROGATE = /\p{Surrogate}/u

/**
 * Refuses text that is not valid Unicode: a lone surrogate (which JSON's `\uD800` escape can carry) would
 * be stored or compared as something else than what was sent, differently on each database. A NUL character
 * is refused too: PostgreSQL's text cannot hold it, and what the others store with it PostgreSQL could not.
 */
export function checkUnicode(text: string, path: string) {
  if (LONE_SURROGATE.test(text)) {
    throw badField(path, 'must be valid Unicode (it holds a lone surrogate, \\uD800 to \\uDFFF)')
  }
  if (text.includes('\u0000')) throw badField(path, 'must not hold a NUL character (\\u0000)')
}

/**
 * A value from a filter or body, converted to what the driver binds for this field.
 * Throws a 400 naming `path` when the value does not fit the field's type.
 */
export function encodeValue(field: ResolvedField, value: unknown, path: string = field.name): DbValue {
  if (value === null) return null
  switch (field.kind) {
    case 'boolean':
      if (typeof value === 'boolean') return value
      throw badField(path, 'must be a boolean')
    case 'integer': {
      const number = typeof value === 'string' ? parseNumber('integer', value) : value
      if (typeof number === 'number' && Number.isSafeInteger(number)) return number
      throw badField(path, 'must be an integer')
    }
    case 'number': {
      const number = typeof value === 'string' ? parseNumber('number', value) : value
      if (typeof number === 'number' && Number.isFinite(number)) return number
      throw badField(path, 'must be a number')
    }
    case 'date': {
      let time = NaN
      if (value instanceof Date) time = value.getTime()
      else if (typeof value === 'string') time = parseIsoDate(value)
      if (Number.isNaN(time)) throw badField(path, 'must be an ISO 8601 date-time with an offset')
      if (!isStorableDate(time)) throw badField(path, `must be ${DATE_RANGE}`)
      return new Date(time)
    }
    case 'string':
      if (typeof value === 'string') {
        checkUnicode(value, path)
        return value
      }
      // Numeric ids arrive as numbers from JSON clients even where the id is stored as text.
      if (field.role === 'id' && typeof value === 'number') return String(value)
      throw badField(path, 'must be a string')
  }
}

/** A record (or part of one) as a row to write; unknown and computed fields are refused. */
export function encodeRow(resource: ResolvedResource, data: Record<string, unknown>) {
  const row: Record<string, DbValue> = {}
  for (const [name, value] of Object.entries(data)) {
    if (value === undefined) continue
    const field = resource.fieldMap.get(name)
    if (!field) throw badField(name, `is not a field of ${resource.name}`)
    if (field.computed || field.expression) throw badField(name, 'is computed and cannot be written')
    row[field.column] = encodeValue(field, value)
  }
  return row
}

const serializers = new WeakMap<ResolvedResource, RowDecoder>()

/**
 * The record as clients see it, in the resource's field order: fields that are filterOnly or hidden are left
 * out, missing ones are null.
 */
export function recordSerializer(resource: ResolvedResource): RowDecoder {
  let serialize = serializers.get(resource)
  if (!serialize && resource.definition.fieldRules) {
    // A field a caller's rules withheld is absent from its records: absent from what it is sent, not null.
    const names = serializedFields(resource).map((field) => field.name)
    serialize = (input) => {
      const record: Record<string, unknown> = {}
      for (const name of names) if (name in input) record[name] = input[name] ?? null
      return record
    }
    serializers.set(resource, serialize)
  }
  if (!serialize) {
    const fields = resource.fields
      .filter((field) => field.serialized)
      .map((field) => [field.name, `input[${property(field.name)}] ?? null`] as const)
    serialize = compileRecordFunction('serializeRecord', fields, [], {})
    serializers.set(resource, serialize)
  }
  return serialize
}
