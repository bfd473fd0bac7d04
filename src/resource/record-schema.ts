import { Type, type TObject } from '@sinclair/typebox'
import { propertySchema } from './input-schemas'
import { serializedFields, type ResolvedResource } from './resolved'

/**
 * The serialized record as clients receive it (`recordSerializer`): every serialized field is present, with
 * null for an empty value, and nothing else.
 */
export function recordSchemaOf(resource: ResolvedResource): TObject {
  const properties = Object.fromEntries(
    serializedFields(resource).map((field) => [field.name, propertySchema(field)])
  )
  return Type.Object(properties, { title: resource.name, additionalProperties: false })
}
