import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  type GraphQLScalarType
} from 'graphql'
import type { FieldKind } from '../../resource/field-kind'
import type { ResolvedField } from '../../resource/resolved'
import { connectionCursorScalar, dateTimeScalar } from './scalars'
import type { GraphqlTypes } from './registry'

export function dateTimeType(types: GraphqlTypes) {
  return types.named('DateTime', dateTimeScalar)
}

export function connectionCursorType(types: GraphqlTypes) {
  return types.named('ConnectionCursor', connectionCursorScalar)
}

/** The GraphQL scalar of a field kind: integers Int, numbers Float, dates DateTime. */
export function kindScalar(types: GraphqlTypes, kind: FieldKind): GraphQLScalarType {
  switch (kind) {
    case 'string':
      return GraphQLString
    case 'integer':
      return GraphQLInt
    case 'number':
      return GraphQLFloat
    case 'boolean':
      return GraphQLBoolean
    case 'date':
      return dateTimeType(types)
  }
}

/** The GraphQL scalar a field is exposed as; the identifier is an `ID` whatever its stored type. */
export function fieldScalar(types: GraphqlTypes, field: ResolvedField): GraphQLScalarType {
  return field.role === 'id' ? GraphQLID : kindScalar(types, field.kind)
}
