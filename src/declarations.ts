import type { GraphQLSchema } from 'graphql'
import type { OpenApiDocument } from './openapi/types'
import type { ResolvedResource } from './resource/resolve'
import type { ResourceService } from './service/resource-service'

declare module '@feathersjs/feathers/lib/declarations' {
  interface ServiceOptions<MethodTypes = string> {
    /** Set by feathers-query on each resource service; transports read the resource from here. */
    resource?: ResolvedResource
  }
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface HookContext<A = Application, S = any> {
    /**
     * Set by feathers-query on its resources' writes: the records as the write left them in the database,
     * hidden fields included, whatever `$select` or resolvers made of `result`. Real-time events are
     * authorized against these.
     */
    writtenRecords?: Array<Record<string, unknown>>
  }
}

/** What `app.get('feathersQuery')` holds once the plugin is configured. */
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
