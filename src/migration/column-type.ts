import type { FieldKind } from '../resource/field-kind'

/** A column's type as the generated migration writes it with knex's schema builder. */
export type ColumnType =
  | {
      name:
        'increments' | 'bigIncrements' | 'integer' | 'bigInteger' | 'double' | 'boolean' | 'datetime' | 'date'
    }
  /** Text compared by code point: `varchar(length)`, or a text type beyond `VARCHAR_LIMIT`. */
  | { name: 'string'; length: number }
  | { name: 'text'; length?: number }

/** What `table.string(name)` gives, and the CLI's own migrations: text without a maxLength. */
export const DEFAULT_STRING_LENGTH = 255

/**
 * The longest text kept as varchar. MySQL's rows hold 65,535 bytes of varchar at most, four bytes per utf8mb4
 * character: a few such columns fit; longer text is a text column (which MySQL does not index).
 */
export const VARCHAR_LIMIT = 2000

/** The most characters an index may cover on MySQL (3,072 bytes of utf8mb4). */
export const INDEXABLE_LENGTH = 768

const INT32 = 2 ** 31

export interface TypedSchema {
  format?: unknown
  maxLength?: unknown
  minimum?: unknown
  maximum?: unknown
  exclusiveMinimum?: unknown
  exclusiveMaximum?: unknown
}

/** Whether an integer field's bounds leave 32 bits (a field without bounds is taken as 32 bits, as knex does). */
function needs64Bits(schema: TypedSchema) {
  const bounds = [schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum]
  return bounds.some((bound) => typeof bound === 'number' && (bound >= INT32 || bound < -INT32))
}

/** The type a field of `kind` is stored in; `generated`: an id the database makes. */
export function columnTypeOf(kind: FieldKind, schema: TypedSchema, generated: boolean): ColumnType {
  switch (kind) {
    case 'integer':
      if (generated) return { name: needs64Bits(schema) ? 'bigIncrements' : 'increments' }
      return { name: needs64Bits(schema) ? 'bigInteger' : 'integer' }
    case 'number':
      return { name: 'double' }
    case 'boolean':
      return { name: 'boolean' }
    case 'date':
      return { name: schema.format === 'date' ? 'date' : 'datetime' }
    case 'string': {
      const length = typeof schema.maxLength === 'number' ? schema.maxLength : DEFAULT_STRING_LENGTH
      return length > VARCHAR_LIMIT ? { name: 'text', length } : { name: 'string', length }
    }
  }
}

/** The type of a column that references a key of type `key` (a foreign key matches its key, as MySQL requires). */
export function referencingType(key: ColumnType): ColumnType {
  if (key.name === 'increments') return { name: 'integer' }
  if (key.name === 'bigIncrements') return { name: 'bigInteger' }
  return key
}
