import { GraphQLObjectType, GraphQLSchema, validateSchema, type GraphQLFieldConfigMap } from 'graphql'
import { ConfigurationError } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import type { GraphqlContext } from './fields/context'
import { aggregateSchemaPart } from './fields/aggregate'
import { resourceQueryFields } from './fields/query'
import { GraphqlTypes, type GraphqlSchemaPart } from './type/registry'
import { resourceMutationFields } from './fields/mutation'
import { relationMutationFields } from './fields/relation-mutation'
import { resourceSubscriptionFields } from './fields/subscription'

/**
 * The GraphQL schema of a set of resolved resources: per resource `<one>(id)` and `<many>(paging, filter,
 * sorting)` queries, object types with their relations, aggregate queries, plus what `parts` contribute;
 * the mutations and subscriptions of nestjs-query (see `mutations/` and `subscriptions/`). Invalid names are
 * reported at start-up, like every configuration mistake.
 */
/** The root fields the resources contribute, refusing a name two of them would take. */
function rootFields(
  kind: string,
  resources: ResolvedResource[],
  contribute: (resource: ResolvedResource) => Array<GraphQLFieldConfigMap<unknown, GraphqlContext>>
) {
  const fields: GraphQLFieldConfigMap<unknown, GraphqlContext> = {}
  const owner = new Map<string, string>()
  for (const resource of resources) {
    for (const [name, field] of contribute(resource).flatMap((map) => Object.entries(map))) {
      if (owner.has(name)) {
        throw new ConfigurationError(`GraphQL ${kind} "${name}" of ${resource.name} clashes with ${owner.get(name)}`)
      }
      owner.set(name, resource.name)
      fields[name] = field
    }
  }
  return fields
}

export function buildGraphqlSchema(
  resources: ResolvedResource[],
  parts: GraphqlSchemaPart[] = []
): GraphQLSchema {
  // Aggregates are part of the specified surface, built through the same extension point as any other part.
  const types = new GraphqlTypes([aggregateSchemaPart, ...parts])
  const fields = rootFields('query', resources, (resource) => [
    resourceQueryFields(types, resource),
    ...types.parts.map((part) => part.queryFields?.(resource, types) ?? {})
  ])
  const mutations = rootFields('mutation', resources, (resource) => [
    resourceMutationFields(types, resource),
    relationMutationFields(types, resource)
  ])
  const subscriptions = rootFields('subscription', resources, (resource) => [resourceSubscriptionFields(types, resource)])
  const root = (name: string, rootFieldMap: typeof fields) =>
    Object.keys(rootFieldMap).length ? new GraphQLObjectType({ name, fields: rootFieldMap }) : undefined
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields }),
    mutation: root('Mutation', mutations),
    subscription: root('Subscription', subscriptions)
  })
  const errors = validateSchema(schema)
  if (errors.length) {
    throw new ConfigurationError(
      `The generated GraphQL schema is invalid: ${errors.map((e) => e.message).join('; ')}`
    )
  }
  return schema
}
