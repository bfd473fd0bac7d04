/** The public surface of feathers-query; the browser pages are `feathers-query/pages` (src/pages.ts). */
import './declarations'

export { IDField, FilterableField, Field } from './resource/annotations'
export type {
  WriteOptions,
  IDFieldOptions,
  FilterableFieldOptions,
  FieldOptions,
  FieldFacts,
  FactsOf,
  Annotated,
  Nullable
} from './resource/annotations'
export type {
  RecordOf,
  DataOf,
  PatchOf,
  QueryOf,
  RecordQueryOf,
  WriteQueryOf,
  FilterQueryOf,
  FieldOperators,
  PatternOperators,
  AggregateRequestOf,
  HavingOf,
  ReadableFieldOf,
  WritableFieldOf,
  FilterableFieldOf,
  FeathersParams,
  ParamsOf,
  FindResult
} from './resource/typed-records'
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
  ImportOptions,
  AggregateOptions,
  ResourceCachingOptions,
  ConcurrencyOptions,
  UpsertOptions,
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
export type { ResolvedResource, ResolvedField } from './resource/resolved'
export type { FieldRule, FieldRules, FieldRulesOption, FieldUse } from './resource/field-rules-option'
export { ConfigurationError } from './common/errors'
export { feathersQuery } from './plugin'
export type { FeathersQueryOptions } from './plugin'
export type { SqliteOptions } from './dialect/better-sqlite3'
export type { QueryLimits } from './resource/query-limits'
export type { CachingOptions } from './feathers/conditional-read'
export type { BudgetOptions } from './budgets/options'
export type { RedisBudgetClient } from './budgets/redis-store'
export type { LiveOptions } from './live/live-options'
export type { LiveQueryData, LiveQueryStarted, LiveQueryResult } from './feathers/live-queries-service'
export { PreconditionFailed, PreconditionRequired } from './service/record-version'
export { ResourceService } from './service/resource-service'
export type { ResourceParams, ResourceRecord } from './model/records'
export { errorHandler } from './error-handler'
export { gracefulShutdown } from './operations/shutdown'
export type { GracefulShutdownOptions } from './operations/shutdown'
export type { HealthOptions } from './operations/readiness'
export { buildGraphqlSchema } from './graphql/schema'
export { GraphqlTypes } from './graphql/type/registry'
export { filterInputType } from './graphql/type/filter-input'
export type { GraphqlSchemaPart } from './graphql/fields/schema-part'
export type { GraphqlOptions } from './graphql/execution/endpoint'
export type { TrustedDocumentsOptions } from './graphql/execution/trusted-documents'
export type { RealtimeOptions } from './feathers/connections-per-user'
export type { GraphqlContext } from './graphql/fields/context'
export { openApiDocument } from './openapi/document'
export type { OpenApiDocumentOptions } from './openapi/document'
export type { OpenApiOptions } from './openapi/middleware'
export type { OpenApiDocument, SecuritySchemeObject } from './openapi/types'
export { andFilters } from './query/filters'
export { searchFields } from './feathers/search-fields'
export { authorizedPublisher } from './feathers/channels'
export type { Publisher } from './feathers/channels'
export { QUERY_SYNTAX_HEADER } from './feathers/query-syntax-header'
export { DEFAULT_MAX_MULTI } from './service/multi'
export type { MultiMethod } from './service/multi'
export type { SearchOptions } from './feathers/search-fields'
export { COMPARISON_OPERATORS } from './model/query'
export type {
  Scalar,
  Between,
  FieldComparison,
  ComparisonOperator,
  Filter,
  SortDirection,
  SortNulls,
  SortField,
  SortAggregate,
  OffsetPaging,
  ResourceQuery,
  LinkQuery,
  Keyset
} from './model/query'
export type { Page, Partition, PartitionedPages } from './model/page'
export { AGGREGATE_FUNCTIONS, DATE_BUCKETS, isCounting } from './model/aggregate'
export type {
  AggregateFunction,
  DateBucket,
  GroupFill,
  GroupByField,
  AggregateHaving,
  AggregateSortField,
  AggregateRequest,
  AggregatePage,
  AggregateResponse,
  AggregateSelection,
  AggregateValues,
  RunningSelection,
  PartitionedAggregates
} from './model/aggregate'
export type { FeathersQueryState } from './declarations'
export { feathersQueryState } from './state'
export { schemaDifferences } from './registration/schema-differences'
export type { SchemaMismatch, MismatchKind } from './schema/compare'
export { feathersQueryConfiguration, paginateConfiguration } from './registration/configuration'
export type { FeathersQueryConfiguration, PageSizeSetting } from './registration/configuration'
export type { Logger } from './common/logger'
export type { ImportData, ImportQuery } from './import/import-call'
export type { ImportLineError, ImportProgressEvent, ImportReport } from './import/report'
