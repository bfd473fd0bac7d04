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

const EVENTS = Object.values(WRITE_EVENTS)

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
    related: options.related
  })
  const transactionHook = transactional(options.Model)
  const events = [...EVENTS, ...(resource.definition.events ?? [])]
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
  const rowsBudget = rowsBudgetHook((method) =>
    method === 'get'
      ? 1
      : method === 'aggregate'
        ? resource.maxAggregateGroups
        : resource.query.maxResultsSize
  )
  // (Feathers' hook map types know the standard methods only.)
  app.service(resource.basePath).hooks({ around: { aggregate: [rowsBudget] } } as never)
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
