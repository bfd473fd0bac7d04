import { GraphQLObjectType, GraphQLSchema, validateSchema, type GraphQLFieldConfigMap } from 'graphql'
import { ConfigurationError } from '../errors'
import type { ResolvedResource } from '../resource/resolve'
import type { GraphqlContext } from './context'
import { aggregateSchemaPart } from './aggregate-fields'
import { resourceQueryFields } from './query-fields'
import { GraphqlTypes, type GraphqlSchemaPart } from './types'

/**
 * The GraphQL schema of a set of resolved resources: per resource `<one>(id)` and `<many>(paging, filter,
 * sorting)` queries, object types with their relations, aggregate queries, plus what `parts` contribute.
 * No mutations: the GraphQL surface reads only. Invalid names are reported at start-up, like every
 * configuration mistake.
 */
export function buildGraphqlSchema(
  resources: ResolvedResource[],
  parts: GraphqlSchemaPart[] = []
): GraphQLSchema {
  // Aggregates are part of the specified surface, built through the same extension point as any other part.
  const types = new GraphqlTypes([aggregateSchemaPart, ...parts])
  const fields: GraphQLFieldConfigMap<unknown, GraphqlContext> = {}
  const owner = new Map<string, string>()
  for (const resource of resources) {
    const contributed = [
      resourceQueryFields(types, resource),
      ...types.parts.map((part) => part.queryFields?.(resource, types))
    ]
    for (const [name, field] of contributed.flatMap((map) => Object.entries(map ?? {}))) {
      if (owner.has(name)) {
        throw new ConfigurationError(
          `GraphQL query "${name}" of ${resource.name} clashes with ${owner.get(name)}`
        )
      }
      owner.set(name, resource.name)
      fields[name] = field
    }
  }
  const schema = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields }) })
  const errors = validateSchema(schema)
  if (errors.length) {
    throw new ConfigurationError(
      `The generated GraphQL schema is invalid: ${errors.map((e) => e.message).join('; ')}`
    )
  }
  return schema
}
