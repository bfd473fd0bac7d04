import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  type GraphQLScalarType
} from 'graphql'
import { parseNumber } from '../../resource/codec'
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

/**
 * An id (GraphQL's `ID` is text) as a key field stores it: text the codec reads as an integer becomes that
 * number for a numeric key (SubTask.todoItemId is a String, TodoItem.id an Int); anything else stays text,
 * which the codec refuses for a numeric key with its own message. Not `Number()`, which reads "0x10", "1e1",
 * " 7" and "" as numbers and would name another record.
 */
export function asForeignKey(field: ResolvedField, id: unknown): string | number {
  const text = String(id)
  if (field.kind !== 'integer' && field.kind !== 'number') return text
  const number = parseNumber('integer', text)
  return Number.isNaN(number) ? text : number
}
