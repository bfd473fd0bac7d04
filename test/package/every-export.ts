// Copied into the Feathers CLI app's src/ by cli-app.test.ts and compiled with the app's own tsconfig
// (es2020, declaration: true, strict): every export of the package used as an application would, and
// exported again so that the declarations the app emits must name the package's types (where TS4023 shows).
import type { HookContext } from '@feathersjs/feathers'
import { Type } from '@feathersjs/typebox'
import { GraphQLString } from 'graphql'
import type { Knex } from 'knex'
import {
  AGGREGATE_FUNCTIONS,
  COMPARISON_OPERATORS,
  ConfigurationError,
  DATE_BUCKETS,
  DEFAULT_MAX_MULTI,
  Field,
  FilterableField,
  GraphqlTypes,
  IDField,
  PagingStrategies,
  QUERY_SYNTAX_HEADER,
  ResourceService,
  andFilters,
  authorizedPublisher,
  buildGraphqlSchema,
  defineResource,
  errorHandler,
  feathersQuery,
  feathersQueryConfiguration,
  feathersQueryState,
  filterInputType,
  paginateConfiguration,
  openApiDocument,
  searchFields,
  type AggregateOptions,
  type AggregateRequest,
  type AggregateResponse,
  type Authorize,
  type ComputedField,
  type CreateOptions,
  type DeleteOptions,
  type EndpointOptions,
  type ExportOptions,
  type FeathersQueryConfiguration,
  type FeathersQueryOptions,
  type FeathersQueryState,
  type FieldOptions,
  type Filter,
  type FilterableFieldOptions,
  type GraphqlContext,
  type GraphqlOptions,
  type GraphqlPagingOptions,
  type GraphqlPagingStrategy,
  type GraphqlSchemaPart,
  type Guard,
  type Logger,
  type ManyRelationDefinition,
  type JoinDefinition,
  type MultiMethod,
  type OneRelationDefinition,
  type OpenApiDocument,
  type OpenApiDocumentOptions,
  type OpenApiOptions,
  type Page,
  type PageSizeSetting,
  type PagingStrategy,
  type Publisher,
  type QueryLimits,
  type QueryOptions,
  type ReadOptions,
  type ResolvedField,
  type ResolvedResource,
  type ResourceDefinition,
  type ResourceParams,
  type ResourceQuery,
  type ResourceRecord,
  type SearchOptions,
  type SortField,
  type SqlComputedField,
  type SqlFieldContext,
  type SqliteOptions,
  type UpdateOptions
} from 'feathers-query'
import { graphiql, swaggerUi, type GraphiqlPageOptions, type SwaggerUiOptions } from 'feathers-query/pages'

const guard: Guard = (context: HookContext) => {
  if (!context.params.provider) return
}
const authorize: Authorize = (context) => ({ title: { neq: String(context.id ?? '') } })
const nullable: FilterableFieldOptions & FieldOptions = { nullable: true }
const query: QueryOptions = { defaultSort: [{ field: 'title', direction: 'ASC' }], enableTotalCount: true }
const read: ReadOptions = { pagingStrategy: PagingStrategies.OFFSET }
const create: CreateOptions = { guards: [guard] }
const one: EndpointOptions = { description: 'One record' }
const update: UpdateOptions = { replace: false, one }
const remove: DeleteOptions = { useSoftDelete: false }
const exporting: ExportOptions = { batchSize: 500 }
const aggregate: AggregateOptions = { enabled: true, maxGroups: 100 }
const many: ManyRelationDefinition = { resource: 'Step', foreignKey: 'projectId', filterable: true }
const owner: OneRelationDefinition = { resource: 'Project', foreignKey: 'projectId', filterable: true }
// A many-to-many relation's join resource (not declared here: the type alone is what this file checks).
export const through: JoinDefinition = { resource: 'ProjectTag', foreignKey: 'projectId', otherKey: 'tagId' }
const paging: PagingStrategy = 'offset'
const stepsPaging: GraphqlPagingStrategy = PagingStrategies.NONE
const graphqlPaging: GraphqlPagingOptions = { pagingStrategy: PagingStrategies.CURSOR, keyset: true }
const stepCount: SqlComputedField = ({ knex, column }: SqlFieldContext) =>
  knex.raw('SELECT COUNT(*) FROM ?? WHERE ?? = ?', ['steps as counted', 'counted.projectId', column('id')])
const loudTitle: ComputedField = (record: { title: string }) => record.title.toUpperCase()
const multi: MultiMethod[] = ['patch']

export const projects = defineResource({
  name: 'Project',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    title: FilterableField(Type.String()),
    note: Field(Type.String(), nullable),
    loudTitle: Field(Type.String()),
    stepCount: FilterableField(Type.Integer())
  }),
  query: { ...query, pagingStrategy: paging },
  graphql: graphqlPaging,
  computed: { loudTitle },
  sqlComputed: { stepCount },
  read,
  create,
  update,
  delete: remove,
  export: exporting,
  aggregate,
  many: { steps: { ...many, pagingStrategy: stepsPaging } },
  multi,
  maxMulti: DEFAULT_MAX_MULTI,
  guards: [guard],
  authorize
})

export const steps: ResourceDefinition = defineResource({
  name: 'Step',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    projectId: FilterableField(Type.Integer())
  }),
  one: { project: owner }
})

const limits: QueryLimits = { maxFilterDepth: 8 }
const sqlite: SqliteOptions = { busyTimeout: 1000 }
const graphqlOptions: GraphqlOptions = { path: '/graphql' }
const openapi: OpenApiOptions = { path: '/openapi.json' }
const documentOptions: OpenApiDocumentOptions = { info: { title: 'Projects' } }
const configured: FeathersQueryConfiguration = {
  graphql: { path: '/graphql' },
  limits: { maxFilterDepth: 8 }
}
const paginate: PageSizeSetting = { default: 10, max: 50 }
const logger: Logger = console
export const configurationSchemas: object[] = [feathersQueryConfiguration, paginateConfiguration, configured]
export const stateOf = (app: object): FeathersQueryState | undefined => feathersQueryState(app)
export const pluginOptions = (Model: Knex): FeathersQueryOptions => ({
  Model,
  resources: [projects, steps],
  paginate,
  logger,
  graphql: graphqlOptions,
  openapi,
  sqlite,
  limits
})
export const configureProjects = (Model: Knex) => feathersQuery(pluginOptions(Model))

export const describeApi = (state: FeathersQueryState): OpenApiDocument =>
  openApiDocument(state.resources, documentOptions)

const part: GraphqlSchemaPart = {
  queryFields: (resource: ResolvedResource, types: GraphqlTypes) => ({
    [`echo${resource.name}`]: {
      type: GraphQLString,
      args: { filter: { type: filterInputType(types, resource) } },
      resolve: (_source: unknown, _args: unknown, context: GraphqlContext) => String(context.params)
    }
  })
}
export const schemaOf = (state: FeathersQueryState) => buildGraphqlSchema(state.resources, [part])
export const types = new GraphqlTypes([part])

export const firstField = (resource: ResolvedResource): ResolvedField => resource.fields[0]

export async function titles(service: ResourceService, params: ResourceParams): Promise<string[]> {
  const filter: Filter | undefined = andFilters({ title: { like: 'a%' } }, params.query?.filter)
  const sorting: SortField[] = [{ field: 'title', direction: 'DESC' }]
  const request: ResourceQuery = { filter, sorting, paging: { limit: 10 } }
  const page = (await service.find({ ...params, query: request, queryModel: true })) as Page<ResourceRecord>
  return page.data.map((record) => String(record.title))
}

export const countPerTitle = (service: ResourceService): Promise<AggregateResponse[]> => {
  const request: AggregateRequest = { groupBy: [{ field: 'title' }], count: ['id'] }
  return service.aggregate(request) as Promise<AggregateResponse[]>
}

export const publisher: Publisher = authorizedPublisher(() => [])
export const hooks = { search: searchFields(['title'], { maxWords: 3 } satisfies SearchOptions) }
export const koaErrors = errorHandler()
export const pages = [
  swaggerUi({ path: '/docs' } satisfies SwaggerUiOptions),
  graphiql({} satisfies GraphiqlPageOptions)
]
export const header = QUERY_SYNTAX_HEADER
export const vocabulary = [COMPARISON_OPERATORS, AGGREGATE_FUNCTIONS, DATE_BUCKETS]
export const failure = new ConfigurationError('example')
