/**
 * Schemas as the plugin takes them in: by their JSON Schema keywords only. A Feathers CLI app builds them
 * with @feathersjs/typebox, whose `Type` is TypeBox 0.25, others with TypeBox 0.34; each version types its schemas
 * with symbols of its own, so naming one version's `TSchema` here would refuse the other's schemas.
 */
export interface FieldSchema {
  type?: unknown
  format?: unknown
  description?: string
  default?: unknown
  readOnly?: boolean
  anyOf?: FieldSchema[]
}

/** A `Type.Object(...)` of any TypeBox version: properties, and which of them must be present. */
export interface ObjectSchema {
  type: 'object'
  properties: Record<string, FieldSchema>
  required?: string[]
  description?: string
  additionalProperties?: unknown
}
