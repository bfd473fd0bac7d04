import type { FieldSchema } from './json-schema'

/** How a field is stored, compared and serialized. */
export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'date'

/** The kind, from the schema's JSON Schema keywords; `undefined` when the plugin cannot store the type. */
export function fieldKindOf(schema: FieldSchema): FieldKind | undefined {
  switch (schema.type) {
    case 'boolean':
      return 'boolean'
    case 'integer':
      return 'integer'
    case 'number':
      return 'number'
    case 'string':
      return schema.format === 'date-time' || schema.format === 'date' ? 'date' : 'string'
    default:
      return undefined
  }
}

export function isNumericKind(kind: FieldKind) {
  return kind === 'integer' || kind === 'number'
}
