import {
  GraphQLInputObjectType,
  GraphQLNonNull,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType
} from 'graphql'
import type { TObject } from '@sinclair/typebox'
import { createSchemaOf, updateSchemaOf } from '../../resource/input-schemas'
import type { ResolvedResource } from '../../resource/resolved'
import { fieldScalar } from './field-types'
import type { GraphqlTypes } from './registry'

/** Whether a property schema admits null (`T | null`, as `propertySchema` writes nullable fields). */
function admitsNull(schema: { anyOf?: Array<{ type?: unknown }>; type?: unknown } & object) {
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true
  return schema.anyOf?.some((member) => member.type === 'null') ?? false
}

/**
 * An input type with the properties of a body schema, the same one REST validates with (a custom
 * `create.schema`/`update.schema` included), so read-only and hidden fields are absent. A property is
 * non-null when the schema requires it and null is not among its values. `undefined` for a schema without
 * properties: GraphQL has no empty input types.
 */
function bodyInputType(
  types: GraphqlTypes,
  resource: ResolvedResource,
  name: string,
  schema: TObject
): GraphQLInputObjectType | undefined {
  const names = Object.keys(schema.properties).filter((property) => resource.fieldMap.has(property))
  if (names.length === 0) return undefined
  const required = new Set(schema.required ?? [])
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        fields: () => {
          const fields: GraphQLInputFieldConfigMap = {}
          for (const property of names) {
            const field = resource.fieldMap.get(property)!
            const scalar: GraphQLInputType = fieldScalar(types, field)
            const nonNull =
              required.has(property) &&
              !admitsNull(
                schema.properties[property] as { anyOf?: Array<{ type?: unknown }>; type?: unknown }
              )
            fields[property] = {
              type: nonNull ? new GraphQLNonNull(scalar) : scalar,
              description: field.description
            }
          }
          return fields
        }
      })
  )
}

/** `Create<Resource>`: the create body (nestjs-query's default name for the create DTO). */
export function createInputType(types: GraphqlTypes, resource: ResolvedResource) {
  return bodyInputType(types, resource, `Create${resource.name}`, createSchemaOf(resource))
}

/** `Update<Resource>`: the partial update body. */
export function updateInputType(types: GraphqlTypes, resource: ResolvedResource) {
  return bodyInputType(types, resource, `Update${resource.name}`, updateSchemaOf(resource))
}
