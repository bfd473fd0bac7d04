import { Type, type TObject } from '@sinclair/typebox'
import { propertySchema } from './input-schemas'
import { serializedFields, type ResolvedResource } from './resolved'

/**
 * The serialized record as clients receive it (`recordSerializer`): every serialized field is present, with
 * null for an empty value, and nothing else. With `fieldRules`, a caller may be given less than every field:
 * then only the id is sure to be there.
 */
export function recordSchemaOf(resource: ResolvedResource): TObject {
  const ruled = resource.definition.fieldRules !== undefined
  const properties = Object.fromEntries(
    serializedFields(resource).map((field) => {
      const schema = propertySchema(field)
      return [field.name, ruled && field !== resource.idField ? Type.Optional(schema) : schema]
    })
  )
  return Type.Object(properties, { title: resource.name, additionalProperties: false })
}
