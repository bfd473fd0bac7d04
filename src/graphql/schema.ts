import { GraphQLObjectType, GraphQLSchema, validateSchema, type GraphQLFieldConfigMap } from 'graphql'
import { ConfigurationError } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import type { GraphqlContext } from './fields/context'
import { aggregateSchemaPart } from './fields/aggregate'
import { mutationSchemaPart } from './fields/mutation'
import { querySchemaPart } from './fields/query'
import { relationSchemaPart } from './fields/relation'
import type { GraphqlSchemaPart } from './fields/schema-part'
import { subscriptionSchemaPart } from './fields/subscription'
import { liveSchemaPart } from './fields/live'
import { GraphqlTypes } from './type/registry'

type RootFields = GraphQLFieldConfigMap<unknown, GraphqlContext>

/**
 * The plugin's own field families. Their order is the order of the fields they add, on the root types and on
 * each object type (relations before relation aggregates), which the printed schema shows.
 */
const FIELD_FAMILIES: GraphqlSchemaPart[] = [
  querySchemaPart,
  mutationSchemaPart,
  relationSchemaPart,
  aggregateSchemaPart,
  subscriptionSchemaPart,
  liveSchemaPart
]

/** The root fields the resources contribute, refusing a name two of them would take. */
function rootFields(
  kind: string,
  resources: ResolvedResource[],
  contribute: (resource: ResolvedResource) => RootFields[]
) {
  const fields: RootFields = {}
  const owner = new Map<string, string>()
  for (const resource of resources) {
    for (const [name, field] of contribute(resource).flatMap((map) => Object.entries(map))) {
      if (owner.has(name)) {
        throw new ConfigurationError(
          `GraphQL ${kind} "${name}" of ${resource.name} clashes with ${owner.get(name)}`
        )
      }
      owner.set(name, resource.name)
      fields[name] = field
    }
  }
  return fields
}

/**
 * The GraphQL schema of a set of resolved resources, composed of the plugin's field families (per resource
 * `<one>(id)` and `<many>(paging, filter, sorting)` queries, the mutations and subscriptions of nestjs-query,
 * relations and aggregates) and then what `parts` contribute. A name two parts take is refused, as is an
 * invalid schema: reported at start-up, like every configuration mistake.
 */
export function buildGraphqlSchema(
  resources: ResolvedResource[],
  parts: GraphqlSchemaPart[] = []
): GraphQLSchema {
  const all = [...FIELD_FAMILIES, ...parts]
  const types = new GraphqlTypes(all)
  const fieldsOf = (kind: 'query' | 'mutation' | 'subscription') =>
    rootFields(kind, resources, (resource) =>
      all.map((part) => part[`${kind}Fields`]?.(resource, types) ?? {})
    )
  const root = (name: string, fields: RootFields) =>
    Object.keys(fields).length ? new GraphQLObjectType({ name, fields }) : undefined
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: fieldsOf('query') }),
    mutation: root('Mutation', fieldsOf('mutation')),
    subscription: root('Subscription', fieldsOf('subscription'))
  })
  const errors = validateSchema(schema)
  if (errors.length) {
    throw new ConfigurationError(
      `The generated GraphQL schema is invalid: ${errors.map((e) => e.message).join('; ')}`
    )
  }
  return schema
}
