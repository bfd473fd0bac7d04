/** The public surface of feathers-query; the browser pages are `feathers-query/pages` (src/pages.ts). */
import './declarations'

export { IDField, FilterableField, Field } from './resource/annotations'
export type { FilterableFieldOptions, FieldOptions } from './resource/annotations'
export { defineResource, PagingStrategies } from './resource/definition'
export type {
  ResourceDefinition,
  QueryOptions,
  ReadOptions,
  CreateOptions,
  UpdateOptions,
  DeleteOptions,
  EndpointOptions,
  ExportOptions,
  AggregateOptions,
  ManyRelationDefinition,
  JoinDefinition,
  OneRelationDefinition,
  Guard,
  Authorize,
  PagingStrategy,
  GraphqlPagingStrategy,
  GraphqlPagingOptions,
  ComputedField,
  SqlComputedField,
  SqlFieldContext
} from './resource/definition'
export type { ResolvedResource, ResolvedField } from './resource/resolve'
export { ConfigurationError } from './errors'
export { feathersQuery } from './plugin'
export type { FeathersQueryOptions } from './plugin'
export type { SqliteOptions } from './service/sqlite-client'
export type { QueryLimits } from './query/limits'
export { ResourceService } from './service/resource-service'
export type { ResourceParams, ResourceRecord } from './service/resource-service'
export { errorHandler } from './rest/error-handler'
export { buildGraphqlSchema } from './graphql/schema'
export { GraphqlTypes } from './graphql/types'
export { filterInputType } from './graphql/filter-input'
export type { GraphqlSchemaPart } from './graphql/types'
export type { GraphqlOptions } from './graphql/middleware'
export type { GraphqlContext } from './graphql/context'
export { openApiDocument } from './openapi/document'
export type { OpenApiDocumentOptions } from './openapi/document'
export type { OpenApiOptions } from './openapi/middleware'
export type { OpenApiDocument } from './openapi/types'
export { andFilters } from './query/filters'
export { searchFields } from './hooks/search'
export { authorizedPublisher } from './feathers/channels'
export type { Publisher } from './feathers/channels'
export { QUERY_SYNTAX_HEADER } from './feathers/request-form'
export { DEFAULT_MAX_MULTI } from './service/multi'
export type { MultiMethod } from './service/multi'
export type { SearchOptions } from './hooks/search'
export * from './query/model'
export type { FeathersQueryState } from './declarations'
