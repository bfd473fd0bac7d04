import type { GraphQLFieldConfigMap, GraphQLNamedType } from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'
import type { GraphqlContext } from '../fields/context'

/**
 * A contribution to the generated schema from another feature (e.g. aggregates): extra root query fields
 * and extra fields on each resource's object type, built with the same type registry.
 */
export interface GraphqlSchemaPart {
  queryFields?(
    resource: ResolvedResource,
    types: GraphqlTypes
  ): GraphQLFieldConfigMap<unknown, GraphqlContext>
  objectFields?(
    resource: ResolvedResource,
    types: GraphqlTypes
  ): GraphQLFieldConfigMap<ResourceRecord, GraphqlContext>
  /**
   * The `objectFields` resolvers read nothing of the record but its id. Otherwise a GraphQL call that selects
   * one of them reads whole records, as a resolver may use any field.
   */
  objectFieldsReadOnlyId?: boolean
}

/**
 * The named types of one schema under construction. graphql-js requires one instance per name in a schema,
 * so every builder asks the registry, which builds a type the first time its name is asked for.
 */
export class GraphqlTypes {
  private readonly byName = new Map<string, GraphQLNamedType>()

  constructor(readonly parts: GraphqlSchemaPart[] = []) {}

  named<T extends GraphQLNamedType>(name: string, build: () => T): T {
    let type = this.byName.get(name)
    if (!type) {
      type = build()
      this.byName.set(name, type)
    }
    return type as T
  }
}
