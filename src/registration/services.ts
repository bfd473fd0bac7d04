import type { Application } from '@feathersjs/koa'
import type { Knex } from 'knex'
import type { Context, Next } from '../common/koa'
import type { ResolvedResource } from '../resource/resolved'
import type { QueryLimits } from '../resource/query-limits'
import { ResourceService, resourceService } from '../service/resource-service'
import { resourceHooks } from '../service/hooks'
import { serviceSpan } from '../feathers/service-span'
import { transactional } from '../service/transaction'
import { keepWrittenRecords } from '../service/written-records'
import { checkQueryString } from '../rest/query-string'
import { requireJsonWrites } from '../rest/request-body'
import { WRITE_EVENTS } from '../feathers/external-records'
import { privateEvents } from '../feathers/private-events'
import { rowsBudgetHook } from '../budgets/rows-hook'
import { Channel } from '@feathersjs/transport-commons'
import { methodGuards } from '../authorization/guards'
import { IMPORT_PROGRESS_EVENT, importRecords, type ImportData } from '../import/import-call'

const EVENTS = Object.values(WRITE_EVENTS)

/**
 * An import's progress goes to the connection that called it, never through the application's channels:
 * it is that caller's, like an answer.
 */
function importProgressToCaller(service: unknown) {
  const publish = (service as { publish?: (event: string, publisher: unknown) => void }).publish
  if (typeof publish !== 'function') return
  publish.call(
    service,
    IMPORT_PROGRESS_EVENT,
    (_data: unknown, context: { params?: { connection?: unknown } }) =>
      context.params?.connection ? new Channel([context.params.connection as never]) : undefined
  )
}

/** Feathers' REST transport passes `ctx.feathers` as params: the caller's address goes with it (budgets). */
function callerAddress(ctx: Context, next: Next) {
  ctx.feathers = { ...ctx.feathers, ip: ctx.ip } as typeof ctx.feathers
  return next()
}

/**
 * The methods clients may call: the standard ones an endpoint is not disabled for, `aggregate`, and `upsert`
 * where the resource has an upsert key (a custom method is hooked only when listed here).
 */
function externalMethods(resource: ResolvedResource) {
  const { definition } = resource
  const methods = ['find', 'get', 'aggregate']
  if (resource.upsertKey) methods.push('upsert')
  if (!definition.create?.disabled) methods.push('create')
  if (!definition.create?.disabled && !definition.import?.disabled) methods.push('import')
  if (!definition.update?.disabled) methods.push('update', 'patch')
  if (!definition.delete?.disabled) methods.push('remove')
  return methods
}

export interface ServiceRegistration {
  Model: Knex
  limits: QueryLimits
  reuseStatements?: boolean
  /** The application's write generation, undefined while the resource's counts are not reused. */
  writeGeneration?: () => number | undefined
  /** The registered service of a resource by name, whichever call registered it. */
  related: (name: string) => ResourceService | undefined
  /** The spec's routes of the resource, built once every resource is registered. */
  routes: (ctx: Context, next: Next) => unknown
}

/** Registers a resource's Feathers service at its base path, with the resource in the service options. */
export function registerService(app: Application, resource: ResolvedResource, options: ServiceRegistration) {
  const service = new ResourceService(resource, {
    Model: options.Model,
    limits: options.limits,
    reuseStatements: options.reuseStatements,
    writeGeneration: options.writeGeneration,
    registered: () => resourceService(app, resource),
    related: options.related,
    importer: (data, params) =>
      importRecords(
        { resource, knex: options.Model, service: resourceService(app, resource) as never },
        data as ImportData,
        params
      )
  })
  const transactionHook = transactional(options.Model)
  const events = [...EVENTS, IMPORT_PROGRESS_EVENT, ...(resource.definition.events ?? [])]
  app.use(resource.basePath, service, {
    methods: externalMethods(resource),
    // The plugin emits these itself, with the records clients may see (see externalRecords).
    events,
    serviceEvents: events,
    // The spec's routes sit in front of Feathers' own REST handler of the service, if the app has one.
    koa: { before: [callerAddress, checkQueryString, requireJsonWrites, options.routes as never] },
    resource
  })
  privateEvents(app, app.service(resource.basePath), EVENTS)
  importProgressToCaller(app.service(resource.basePath))
  const rowsBudget = rowsBudgetHook((method) =>
    method === 'get'
      ? 1
      : method === 'aggregate'
        ? resource.maxAggregateGroups
        : resource.query.maxResultsSize
  )
  // (Feathers' hook map types know the standard methods only.)
  app.service(resource.basePath).hooks({ around: { aggregate: [rowsBudget] } } as never)
  // An import's caller is one who creates: the create guards turn it away before its body is read.
  app.service(resource.basePath).hooks({ before: { import: methodGuards(resource).create } } as never)
  app.service(resource.basePath).hooks({
    around: {
      all: [serviceSpan],
      find: [rowsBudget],
      get: [rowsBudget],
      create: [transactionHook, keepWrittenRecords],
      update: [transactionHook, keepWrittenRecords],
      patch: [transactionHook, keepWrittenRecords],
      remove: [transactionHook, keepWrittenRecords],
      ...(resource.upsertKey ? { upsert: [transactionHook, keepWrittenRecords] } : {})
    },
    before: resourceHooks(resource)
  })
}
