import { GraphQLInt, GraphQLNonNull, GraphQLObjectType } from 'graphql'
import { serializedFields, type ResolvedResource } from '../../resource/resolved'
import { fieldScalar } from './field-types'
import type { GraphqlTypes } from './registry'

/** `UpdateManyResponse { updatedCount }`, shared by every resource. */
export function updateManyResponseType(types: GraphqlTypes) {
  return types.named(
    'UpdateManyResponse',
    () =>
      new GraphQLObjectType({
        name: 'UpdateManyResponse',
        fields: {
          updatedCount: {
            type: new GraphQLNonNull(GraphQLInt),
            description: 'The number of records updated.'
          }
        }
      })
  )
}

/** `DeleteManyResponse { deletedCount }`, shared by every resource. */
export function deleteManyResponseType(types: GraphqlTypes) {
  return types.named(
    'DeleteManyResponse',
    () =>
      new GraphQLObjectType({
        name: 'DeleteManyResponse',
        fields: {
          deletedCount: {
            type: new GraphQLNonNull(GraphQLInt),
            description: 'The number of records deleted.'
          }
        }
      })
  )
}

/**
 * `<Resource>DeleteResponse`: the record's serialized fields, every one nullable and no relations, as
 * nestjs-query has it (the record is gone, so there is nothing to relate to).
 */
export function deleteResponseType(types: GraphqlTypes, resource: ResolvedResource) {
  const name = `${resource.name}DeleteResponse`
  return types.named(
    name,
    () =>
      new GraphQLObjectType({
        name,
        fields: () =>
          Object.fromEntries(
            serializedFields(resource).map((field) => [
              field.name,
              { type: fieldScalar(types, field), description: field.description }
            ])
          )
      })
  )
}
