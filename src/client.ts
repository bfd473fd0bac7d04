/**
 * The client entry (`feathers-query/client`): typed resource services for a Feathers client application, as
 * a Feathers CLI app's `*.shared.ts` files configure theirs. It loads nothing of the server (knex, Koa,
 * GraphQL): everything else it takes from the plugin is types.
 */
import type { Application, HookContext, Id, Paginated, Params } from '@feathersjs/feathers'
import { FEATHERS_QUERY_SYNTAX, QUERY_SYNTAX_HEADER } from './common/query-syntax'
import type { AggregatePage, AggregateResponse } from './model/aggregate'
import type { ResourceDefinition } from './resource/definition'
import type { ImportQuery } from './import/import-call'
import type { ImportReport } from './import/report'
import type {
  AggregateRequestOf,
  DataOf,
  FilterQueryOf,
  PatchOf,
  QueryOf,
  RecordOf,
  RecordQueryOf,
  WriteQueryOf
} from './resource/typed-records'

export { FEATHERS_QUERY_SYNTAX, QUERY_SYNTAX_HEADER } from './common/query-syntax'
export type { ImportQuery } from './import/import-call'
export type { ImportLineError, ImportProgressEvent, ImportReport } from './import/report'
export type {
  AggregateRequestOf,
  DataOf,
  FieldOperators,
  FilterQueryOf,
  HavingOf,
  PatchOf,
  PatternOperators,
  QueryOf,
  RecordOf,
  RecordQueryOf,
  WriteQueryOf
} from './resource/typed-records'

/** What a client may aggregate: the server refuses `partitionBy` from clients. */
export type ClientAggregateRequestOf<D extends ResourceDefinition> = Omit<
  AggregateRequestOf<D>,
  'partitionBy'
>

/**
 * A resource's service on a Feathers client, typed from its definition (`typeof taskResource`), as
 * `ClientService` types a Feathers CLI service. `find` answers Feathers' page unless the server's `paginate`
 * is off: then say so with `FindResult` (`RecordOf<D>[]`).
 */
export interface ResourceClientService<
  D extends ResourceDefinition = ResourceDefinition,
  FindResult = Paginated<RecordOf<D>>
> {
  find(params?: Params<QueryOf<D>>): Promise<FindResult>
  get(id: Id, params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>>
  create(data: DataOf<D>, params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>>
  create(data: DataOf<D>[], params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  /** A partial update like `patch`, unless the resource sets `update.replace`. */
  update(id: Id, data: PatchOf<D>, params?: Params<WriteQueryOf<D>>): Promise<RecordOf<D>>
  patch(id: Id, data: PatchOf<D>, params?: Params<WriteQueryOf<D>>): Promise<RecordOf<D>>
  patch(id: null, data: PatchOf<D>, params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  remove(id: Id, params?: Params<WriteQueryOf<D>>): Promise<RecordOf<D>>
  remove(id: null, params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  /**
   * Creates the record, or changes the one holding the same `upsert.key` (a list: each, where `multi` allows
   * create). The events say which: `created` or `patched`. Only on resources with an upsert key.
   */
  upsert(data: DataOf<D>, params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>>
  upsert(data: DataOf<D>[], params?: Params<RecordQueryOf<D>>): Promise<RecordOf<D>[]>
  /** With `paging`, one page of groups. */
  aggregate(
    request: ClientAggregateRequestOf<D> & { paging: object },
    params?: Params<FilterQueryOf<D>>
  ): Promise<AggregatePage>
  aggregate(
    request: ClientAggregateRequestOf<D>,
    params?: Params<FilterQueryOf<D>>
  ): Promise<AggregateResponse[]>
  /**
   * Creates the records of a CSV or NDJSON text, or of a list, each as `create` would; the realtime
   * connection that calls it gets `import-progress` events ([import](../docs/guide/import.md)).
   */
  import(data: ClientImportData<D>, params?: Params<ImportQuery>): Promise<ImportReport>
}

/** What a client imports: the file's text (`csv` in the export's format, or `ndjson`) or the records. */
export type ClientImportData<D extends ResourceDefinition> =
  { csv: string } | { ndjson: string } | { records: Array<DataOf<D> | Record<string, unknown>> }

export type ResourceMethod =
  'find' | 'get' | 'create' | 'update' | 'patch' | 'remove' | 'aggregate' | 'upsert' | 'import'

/** Every method of a resource service, `aggregate`, `upsert` and `import` too. */
export const RESOURCE_METHODS: ResourceMethod[] = [
  'find',
  'get',
  'create',
  'update',
  'patch',
  'remove',
  'aggregate',
  'upsert',
  'import'
]

export interface ResourceClientOptions {
  /** The methods the client service offers (default `RESOURCE_METHODS`), as the CLI's `userMethods`. */
  methods?: string[]
}

/**
 * Every call asks for Feathers' syntax and answers, which the spec's routes on the same base path would
 * otherwise give (REST; socket.io sends no headers and always speaks Feathers). The caller's headers stay.
 */
function feathersQuerySyntax(context: HookContext) {
  const headers = { ...context.params.headers, [QUERY_SYNTAX_HEADER]: FEATHERS_QUERY_SYNTAX }
  context.params = { ...context.params, headers }
}

/**
 * Registers the resource service at `path` on a Feathers client application whose `connection` setting is
 * its REST or socket.io connection, as a CLI app's `userClient`: `client.configure(resourceClient('tasks'))`.
 * Type it with `ServiceTypes` (`tasks: ResourceClientService<typeof taskResource>`).
 */
export function resourceClient(path: string, options: ResourceClientOptions = {}) {
  const methods = options.methods ?? RESOURCE_METHODS
  // `any`: the configure function fits every client application, whatever its service types.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (client: Application<any, any>) => {
    const connection = client.get('connection')
    if (!connection) {
      throw new Error(
        `resourceClient('${path}'): the client has no connection; client.set('connection', connection) first`
      )
    }
    client.use(path, connection.service(path), { methods })
    client.service(path).hooks({ before: { all: [feathersQuerySyntax] } })
  }
}
