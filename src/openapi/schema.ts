import type { TSchema } from '@sinclair/typebox'
import type { SchemaObject } from './types'

/**
 * A TypeBox schema as an OpenAPI Schema Object. The document is OpenAPI 3.1, whose Schema Object is JSON Schema
 * itself: the document shows the very schemas Ajv validates requests with, nullable fields included as
 * `anyOf: [T, {type: 'null'}]`. OpenAPI 3.0 would need each of those rewritten into `nullable: true` and
 * cannot say everything JSON Schema says, so docs and validation could drift apart.
 *
 * What is left to do: drop TypeBox's symbol keys and our field annotations (a copy of string keys only), and
 * write draft-07 tuples (`items: [...]`, `additionalItems`), which TypeBox emits, the 2020-12 way.
 */
export function toOpenApiSchema(schema: TSchema): SchemaObject {
  return convert(schema) as SchemaObject
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert)
  if (value === null || typeof value !== 'object') return value
  const result: Record<string, unknown> = {}
  for (const key of Object.keys(value)) result[key] = convert((value as Record<string, unknown>)[key])
  if (Array.isArray(result.items)) {
    const { items, additionalItems, ...rest } = result
    return {
      ...rest,
      prefixItems: items,
      ...(additionalItems === undefined ? {} : { items: additionalItems })
    }
  }
  return result
}

/** A schema without the given keywords (e.g. `description`, which a parameter carries itself). */
export function omitKeywords(schema: SchemaObject, ...keywords: string[]): SchemaObject {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !keywords.includes(key)))
}
