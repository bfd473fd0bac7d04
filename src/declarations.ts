import type { GraphQLSchema } from 'graphql'
import type { OpenApiDocument } from './openapi/types'
import type { ResolvedResource } from './resource/resolved'
import type { ResourceService } from './service/resource-service'
import './service/declarations'

/**
 * What `feathersQueryState(app)` answers once the plugin is configured (the GraphQL schema and the OpenAPI
 * document once the app is set up).
 */
export interface FeathersQueryState {
  resources: ResolvedResource[]
  serviceOf(resource: ResolvedResource): ResourceService
  /** The schema served at the GraphQL endpoint, unless it is turned off. */
  graphqlSchema?: GraphQLSchema
  /** The document served as OpenAPI JSON, unless it is turned off. */
  openApiDocument?: OpenApiDocument
  /** The path of the GraphQL endpoint, where errors are answered in GraphQL's shape. */
  graphqlPath?: string
}
