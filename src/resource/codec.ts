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

export function decodeValue(kind: FieldKind, value: unknown): unknown {
  if (value === null || value === undefined) return null
  switch (kind) {
    case 'boolean':
      return value === true || value === 1 || value === '1' || value === 'true'
    case 'integer':
    case 'number':
      return Number(value)
    case 'date':
      return decodeDate(value)
    case 'string':
      return Buffer.isBuffer(value) ? value.toString('utf8') : String(value)
  }
}

/**
 * A database row as a record: the stored fields the statement read, decoded, then (when asked) the computed
 * fields, which may read any of them.
 */
export function decodeRow(
  row: Record<string, unknown>,
  stored: readonly ResolvedField[],
  computed: readonly ResolvedField[] = []
) {
  const record: Record<string, unknown> = {}
  for (const field of stored) record[field.name] = decodeValue(field.kind, row[field.column])
  for (const field of computed) record[field.name] = field.computed!(record) ?? null
  return record
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

/** The record as clients see it: fields that are filterOnly or hidden are left out. */
export function serializeRecord(resource: ResolvedResource, record: Record<string, unknown>) {
  const result: Record<string, unknown> = {}
  for (const field of resource.fields) {
    if (field.serialized) result[field.name] = record[field.name] ?? null
  }
  return result
}
