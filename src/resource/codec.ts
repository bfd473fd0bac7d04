import { badField } from '../errors'
import type { FieldKind } from './field-kind'
import { isoDate } from './iso-date'
import type { ResolvedField, ResolvedResource } from './resolve'

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
    value === null || value === undefined ? null : value === true || value === 1 || value === '1' || value === 'true',
  integer: (value) => (value === null || value === undefined ? null : Number(value)),
  number: (value) => (value === null || value === undefined ? null : Number(value)),
  date: (value) => (value === null || value === undefined ? null : decodeDate(value)),
  string: (value) =>
    value === null || value === undefined ? null : Buffer.isBuffer(value) ? value.toString('utf8') : String(value)
}

export function decodeValue(kind: FieldKind, value: unknown): unknown {
  return decoders[kind](value)
}

/** A property name as JavaScript source: JSON quoting is a valid string literal for any name. */
const property = (name: string) => JSON.stringify(name)

/**
 * A function of one object-literal expression per field list, compiled once. Every record of a page then
 * has the same shape from its first property on: V8 builds it from a template and JSON.stringify takes its
 * fast path, where assigning computed keys one by one costs a dictionary-like store per field.
 */
function compileRecordFunction(body: string, parameters: Record<string, unknown>) {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function(...Object.keys(parameters), body) as (...values: unknown[]) => unknown
  return factory(...Object.values(parameters)) as (input: Record<string, unknown>) => Record<string, unknown>
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
  const properties = stored.map(
    (field, index) => `${property(field.name)}: decode${index}(row[${property(field.column)}])`
  )
  const parameters: Record<string, unknown> = {}
  stored.forEach((field, index) => (parameters[`decode${index}`] = decoders[field.kind]))
  computed.forEach((field, index) => (parameters[`compute${index}`] = field.computed))
  const computations = computed.map(
    (field, index) => `record[${property(field.name)}] = compute${index}(record) ?? null;`
  )
  return compileRecordFunction(
    `return function decodeRow(row) {
      const record = { ${properties.join(', ')} };
      ${computations.join('\n')}
      return record;
    }`,
    parameters
  )
}

const NUMBER_PATTERN = /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i

/** What the drivers bind. */
export type DbValue = string | number | boolean | Date | null

const INTEGER_PATTERN = /^-?\d+$/
/** A date-time that names its offset (`Z` or `±hh:mm`); one without is read as UTC, not as server time. */
const HAS_OFFSET = /(Z|[+-]\d\d:?\d\d)$/i

function parseDate(value: string) {
  return Date.parse(value.includes('T') && !HAS_OFFSET.test(value) ? `${value}Z` : value)
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
      // Strictly digits: `1e0`, ` 1 ` or `1.0` are not the id 1.
      const number = typeof value === 'string' && INTEGER_PATTERN.test(value) ? Number(value) : value
      if (typeof number === 'number' && Number.isSafeInteger(number)) return number
      throw badField(path, 'must be an integer')
    }
    case 'number': {
      const number = typeof value === 'string' && NUMBER_PATTERN.test(value) ? Number(value) : value
      if (typeof number === 'number' && Number.isFinite(number)) return number
      throw badField(path, 'must be a number')
    }
    case 'date': {
      const time = value instanceof Date ? value.getTime() : typeof value === 'string' ? parseDate(value) : NaN
      if (!Number.isNaN(time)) return new Date(time)
      throw badField(path, 'must be an ISO 8601 date-time')
    }
    case 'string':
      if (typeof value === 'string') return value
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
    if (field.computed) throw badField(name, 'is computed and cannot be written')
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
  if (!serialize) {
    const properties = resource.fields
      .filter((field) => field.serialized)
      .map((field) => `${property(field.name)}: record[${property(field.name)}] ?? null`)
    serialize = compileRecordFunction(
      `return function serializeRecord(record) { return { ${properties.join(', ')} }; }`,
      {}
    )
    serializers.set(resource, serialize)
  }
  return serialize
}
