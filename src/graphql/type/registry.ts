import type { GraphQLFieldConfigMap, GraphQLNamedType } from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import type { ResourceRecord } from '../../model/records'

/**
 * What a resource's object type takes from the schema's parts: the fields each adds after the record's own
 * (relations, relation aggregates, whatever an application adds). The types neither know nor need the
 * context those fields resolve with, so it is a parameter; `GraphqlSchemaPart` is this with GraphQL's context.
 */
export interface ObjectFieldsPart<TContext = unknown> {
  /** How start-up errors name the part, e.g. when it adds a field another part has added already. */
  name?: string
  objectFields?(
    resource: ResolvedResource,
    types: GraphqlTypes
  ): GraphQLFieldConfigMap<ResourceRecord, TContext>
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

  // `any`: each part's fields resolve with a context of its own choosing (graphql-js' own default).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(readonly parts: ReadonlyArray<ObjectFieldsPart<any>> = []) {}

  named<T extends GraphQLNamedType>(name: string, build: () => T): T {
    let type = this.byName.get(name)
    if (!type) {
      type = build()
      this.byName.set(name, type)
    }
    return type as T
  }
}
