import {
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLInputField,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType
} from 'graphql'
import { badInput, type FieldError } from '../../common/errors'
import { filterableFields, type ResolvedResource } from '../../resource/resolved'
import type { Filter } from '../../model/query'
import {
  quantifiedKeys,
  relationFilterKey,
  type RelationQuantifier
} from '../../resource/relation-quantifiers'
import { comparisonType } from './comparisons'
import type { GraphqlTypes } from './registry'

export interface FilterInputOptions {
  /** Type name, `<Resource>Filter` unless given (e.g. `<Resource>AggregateFilter`). */
  name?: string
  /** Make `filterRequired` fields non-null in the input (the collection filter does, nestjs-query alike). */
  enforceRequired?: boolean
  /**
   * Offer the resource's `filterable` relations, each with a filter of its related resource (default true: the
   * collection and aggregate filters; the update, delete and subscription filters do not, as in nestjs-query).
   */
  relations?: boolean
}

/** Marks the input fields that are relation filters, which the operation limits count (see `isRelationFilter`). */
const RELATION_FILTER = 'feathersQueryRelationFilter'

/** Whether an input field is a relation filter: an EXISTS subquery per record it is tested on. */
export function isRelationFilter(field: GraphQLInputField) {
  return field.extensions[RELATION_FILTER] === true
}

/** The resource's relations clients may filter by. */
export function filterableRelations(resource: ResolvedResource) {
  return [...resource.relationMap.values()].filter((relation) => relation.filterable)
}

/**
 * The filter of a related resource inside a relation filter: its collection filter `<Target>Filter`, or
 * `<Target>RelationFilter` when that one insists on `filterRequired` fields, which a relation filter need not
 * name (the related records are reached through the parent, not listed).
 */
function relatedFilterType(types: GraphqlTypes, target: ResolvedResource): GraphQLInputObjectType {
  if (!filterIsRequired(target)) return filterInputType(types, target)
  return filterInputType(types, target, { name: `${target.name}RelationFilter`, enforceRequired: false })
}

/** What a relation filter asks of the related records; the records the caller may not read never count. */
const QUANTIFIER_DESCRIPTIONS: Record<RelationQuantifier, (target: string) => string> = {
  some: (target) => `At least one related ${target} matches.`,
  none: (target) => `No related ${target} matches (\`{}\`: there is no related ${target}).`,
  every: (target) =>
    `Every related ${target} matches (true when there is none; a condition that is unknown, ` +
    'a comparison with NULL, does not match).'
}

/**
 * `<Resource>Filter {and, or, <field>: <Comparison>}` over every filterable field (filterOnly ones included,
 * plain fields not). `and`/`or` hold filters of the same type.
 */
export function filterInputType(
  types: GraphqlTypes,
  resource: ResolvedResource,
  options: FilterInputOptions = {}
): GraphQLInputObjectType {
  const name = options.name ?? `${resource.name}Filter`
  return types.named(name, () => {
    const type: GraphQLInputObjectType = new GraphQLInputObjectType({
      name,
      description: `Conditions on ${resource.name} records; sibling conditions are ANDed.`,
      fields: () => {
        const list = new GraphQLList(new GraphQLNonNull(type))
        const fields: GraphQLInputFieldConfigMap = {
          and: { type: list, description: 'Every one of these filters must match.' },
          or: { type: list, description: 'At least one of these filters must match.' }
        }
        for (const field of filterableFields(resource)) {
          const comparison: GraphQLInputType = comparisonType(types, field)
          const required = options.enforceRequired !== false && field.filterRequired
          fields[field.name] = {
            type: required ? new GraphQLNonNull(comparison) : comparison,
            description: field.description
          }
        }
        if (options.relations !== false) {
          for (const relation of filterableRelations(resource)) {
            const type = relatedFilterType(types, relation.target)
            const keys: Array<[string, RelationQuantifier]> = [[relation.name, 'some']]
            if (relation.kind === 'many') keys.push(...quantifiedKeys(relation.name))
            for (const [key, quantifier] of keys) {
              fields[key] = {
                type,
                description: QUANTIFIER_DESCRIPTIONS[quantifier](relation.target.name),
                extensions: { [RELATION_FILTER]: true }
              }
            }
          }
        }
        return fields
      }
    })
    return type
  })
}

/** Whether the resource's collection filter must be given (some field is `filterRequired`). */
export function filterIsRequired(resource: ResolvedResource) {
  return filterableFields(resource).some((field) => field.filterRequired)
}

function toComparison(value: Record<string, unknown>) {
  const comparison: Record<string, unknown> = {}
  for (const [operator, operand] of Object.entries(value)) {
    // `null` stays: `is: null` means IS NULL, and the compiler explains why `eq: null` is refused.
    if (operand === undefined) continue
    comparison[operator] =
      operand && typeof operand === 'object' && !Array.isArray(operand) ? { ...operand } : operand
  }
  return comparison
}

/**
 * A filter argument as the query model: plain objects (graphql-js gives literals null prototypes), and an
 * explicit `null` for a field or group read as "no condition". Every comparison of a `filterRequired` field
 * must hold at least one operator, as in nestjs-query; the GraphQL type already makes the field present.
 */
export function toFilter(resource: ResolvedResource, value: unknown, path = 'filter'): Filter | undefined {
  if (value === null || value === undefined) return undefined
  const errors: FieldError[] = []
  const convert = (
    resource: ResolvedResource,
    input: Record<string, unknown>,
    at: string,
    related = false
  ): Filter => {
    const filter: Filter = {}
    for (const [key, entry] of Object.entries(input)) {
      if (entry === null || entry === undefined) continue
      if (key === 'and' || key === 'or') {
        filter[key] = (entry as Array<Record<string, unknown>>).map((sub, index) =>
          convert(resource, sub, `${at}.${key}.${index}`, related)
        )
        continue
      }
      const relation = relationFilterKey(resource, key)?.relation
      if (relation) {
        filter[key] = convert(relation.target, entry as Record<string, unknown>, `${at}.${key}`, true)
        continue
      }
      const comparison = toComparison(entry as Record<string, unknown>)
      const required = !related && resource.fieldMap.get(key)?.filterRequired
      if (required && Object.keys(comparison).length === 0) {
        errors.push({
          field: `${at}.${key}`,
          message: 'needs at least one operator (the field is filterRequired)'
        })
      }
      filter[key] = comparison
    }
    return filter
  }
  const filter = convert(resource, value as Record<string, unknown>, path)
  if (errors.length) throw badInput(errors)
  return filter
}
