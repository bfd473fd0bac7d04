import { GraphQLNonNull, GraphQLObjectType, type GraphQLFieldConfigMap } from 'graphql'
import { ConfigurationError } from '../../common/errors'
import { serializedFields, type ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import { fieldScalar } from './field-types'
import type { GraphqlTypes, ObjectFieldsPart } from './registry'

/** Per resource, the object fields that read nothing of the record but its id, as its parts declare. */
const idOnlyFields = new WeakMap<ResolvedResource, Set<string>>()

/** Whether the object field `name` of the resource reads nothing of the record but its id. */
export function readsOnlyId(resource: ResolvedResource, name: string) {
  return idOnlyFields.get(resource)?.has(name) ?? false
}

const partLabel = (part: ObjectFieldsPart) =>
  part.name === undefined ? 'an unnamed schema part' : `schema part "${part.name}"`

/**
 * The object type of a resource: its serialized fields (not filterOnly or hidden ones), the id as `ID`,
 * nullability from the field, then what the schema's parts add, in their order (relations, relation
 * aggregates, ...). A part adding a name the type has already is a configuration error: one would hide
 * the other.
 */
export function objectType(types: GraphqlTypes, resource: ResolvedResource): GraphQLObjectType {
  return types.named(
    resource.name,
    () =>
      new GraphQLObjectType<ResourceRecord>({
        name: resource.name,
        description: resource.definition.schema.description,
        fields: () => {
          const fields: GraphQLFieldConfigMap<ResourceRecord, unknown> = {}
          const owners = new Map<string, string>()
          for (const field of serializedFields(resource)) {
            const scalar = fieldScalar(types, field)
            fields[field.name] = {
              type: field.nullable ? scalar : new GraphQLNonNull(scalar),
              description: field.description
            }
            owners.set(field.name, `the record's own fields`)
          }
          const idOnly = new Set<string>()
          for (const part of types.parts) {
            for (const [name, field] of Object.entries(part.objectFields?.(resource, types) ?? {})) {
              const owner = owners.get(name)
              if (owner) {
                throw new ConfigurationError(
                  `GraphQL field ${resource.name}.${name} of ${partLabel(part)} clashes with ${owner}`
                )
              }
              owners.set(name, partLabel(part))
              fields[name] = field
              if (part.objectFieldsReadOnlyId) idOnly.add(name)
            }
          }
          idOnlyFields.set(resource, idOnly)
          return fields
        }
      })
  )
}
