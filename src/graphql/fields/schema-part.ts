import type { GraphQLFieldConfigMap } from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import type { ObjectFieldsPart, GraphqlTypes } from '../type/registry'
import type { GraphqlContext } from './context'

type RootFields = GraphQLFieldConfigMap<unknown, GraphqlContext>

/**
 * A family of fields of the generated schema, built per resource with the schema's type registry: root
 * queries, mutations and subscriptions, and fields on each resource's object type. The plugin's own families
 * (queries, mutations, relations, aggregates, subscriptions) are parts like any an application adds.
 */
export interface GraphqlSchemaPart extends ObjectFieldsPart<GraphqlContext> {
  queryFields?(resource: ResolvedResource, types: GraphqlTypes): RootFields
  mutationFields?(resource: ResolvedResource, types: GraphqlTypes): RootFields
  subscriptionFields?(resource: ResolvedResource, types: GraphqlTypes): RootFields
}
