import {
  GraphQLBoolean,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLInputFieldConfigMap,
  type GraphQLScalarType
} from 'graphql'
import type { ResolvedField } from '../../resource/resolved'
import { fieldScalar } from './field-types'
import type { GraphqlTypes } from './registry'

interface ComparisonShape {
  name: string
  /** like, notLike, iLike, notILike */
  patterns: boolean
  /** eq, neq, gt, gte, lt, lte, in, notIn */
  values: boolean
  /** between, notBetween (with a `<name>Between {lower upper}` input) */
  ranges: boolean
}

/** The comparison input of each kind of field, named and shaped as nestjs-query's. */
function shapeOf(field: ResolvedField): ComparisonShape {
  if (field.role === 'id') return { name: 'IDFilterComparison', patterns: true, values: true, ranges: false }
  switch (field.kind) {
    case 'string':
      return { name: 'StringFieldComparison', patterns: true, values: true, ranges: false }
    case 'integer':
      return { name: 'IntFieldComparison', patterns: false, values: true, ranges: true }
    case 'number':
      return { name: 'NumberFieldComparison', patterns: false, values: true, ranges: true }
    case 'date':
      return { name: 'DateFieldComparison', patterns: false, values: true, ranges: true }
    case 'boolean':
      return { name: 'BooleanFieldComparison', patterns: false, values: false, ranges: false }
  }
}

function rangeType(types: GraphqlTypes, name: string, scalar: GraphQLScalarType) {
  return types.named(
    name,
    () =>
      new GraphQLInputObjectType({
        name,
        description: 'Inclusive bounds of a range.',
        fields: { lower: { type: new GraphQLNonNull(scalar) }, upper: { type: new GraphQLNonNull(scalar) } }
      })
  )
}

/**
 * The operators a field offers in filters. Several operators given for one field are ANDed, so
 * `{gte: 1, lte: 3}` is a range (nestjs-query ORs them).
 */
export function comparisonType(types: GraphqlTypes, field: ResolvedField): GraphQLInputObjectType {
  const shape = shapeOf(field)
  const scalar = fieldScalar(types, field)
  return types.named(shape.name, () => {
    const fields: GraphQLInputFieldConfigMap = {
      is: {
        type: GraphQLBoolean,
        description: 'null: IS NULL; true/false (boolean fields): IS TRUE/IS FALSE.'
      },
      isNot: { type: GraphQLBoolean, description: 'null: IS NOT NULL; true/false: IS NOT TRUE/IS NOT FALSE.' }
    }
    if (shape.values) {
      for (const operator of ['eq', 'neq', 'gt', 'gte', 'lt', 'lte']) fields[operator] = { type: scalar }
    }
    if (shape.patterns) {
      fields.like = {
        type: scalar,
        description:
          'Case-sensitive SQL LIKE pattern (% and _ wildcards; \\ makes the next character literal).'
      }
      fields.notLike = { type: scalar }
      fields.iLike = { type: scalar, description: 'Case-insensitive SQL LIKE pattern.' }
      fields.notILike = { type: scalar }
    }
    if (shape.values) {
      fields.in = { type: new GraphQLList(new GraphQLNonNull(scalar)) }
      fields.notIn = { type: new GraphQLList(new GraphQLNonNull(scalar)) }
    }
    if (shape.ranges) {
      const range = rangeType(types, `${shape.name}Between`, scalar)
      fields.between = { type: range, description: 'Between lower and upper, both included.' }
      fields.notBetween = { type: range, description: 'Outside lower..upper, both bounds excluded.' }
    }
    return new GraphQLInputObjectType({
      name: shape.name,
      description: 'Operators on one field, ANDed when several are given.',
      fields
    })
  })
}
