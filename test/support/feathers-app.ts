import { authenticate } from '@feathersjs/authentication'
import { BadRequest, NotAuthenticated } from '@feathersjs/errors'
import type { FeathersService, HookContext, NextFunction } from '@feathersjs/feathers'
import { KnexService } from '@feathersjs/knex'
import { rest, type Application } from '@feathersjs/koa'
import { resolve, resolveExternal, resolveResult, virtual } from '@feathersjs/schema'
import socketio from '@feathersjs/socketio'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { subTaskResource } from '../../example/resources/sub-task'
import { tagResources } from '../../example/resources'
import { todoItemResource } from '../../example/resources/todo-item'
import {
  authorizedPublisher,
  defineResource,
  feathersQuery,
  type Filter,
  type ResourceService
} from '../../src'
import { jwtApp, useJwtAuthentication, type User } from './auth-app'

/**
 * An application laid out the way the Feathers CLI generates one: Koa error handler, parseAuthentication,
 * body parser, Feathers' REST transport and socket.io, JWT authentication with a `users` service, then the
 * services (feathersQuery and a @feathersjs/knex audit log), then channels: a connection joins
 * `authenticated` on login and events are published through `authorizedPublisher`.
 *
 * The application's hooks are the ones a deployer writes: `authenticate('jwt')` per method (not as a
 * guard), the owner stamped on create, @feathersjs/schema resolvers for results and for what clients see,
 * an audit hook writing through a KnexService, and application-wide hooks (a resolveExternal, a hook setting
 * `context.dispatch`) registered after the services, as the CLI registers them: they run outside every
 * service's hooks.
 */

/** A TodoItem created with this title makes the audit hook fail after it wrote its audit row. */
export const FAIL_AFTER_AUDIT = 'fail after the audit write'

/** The largest multi create, patch or remove of the fixture's TodoItem. */
export const MAX_MULTI = 5

/** The hidden fields of both resources: no payload a client gets may carry them. */
export const HIDDEN_FIELDS = ['createdBy', 'updatedBy']

const userOf = (context: HookContext) => context.params.user as User | undefined

/** TodoItem: everyone reads and changes their own records only (auth-app's rule). */
function ownRecords(context: HookContext): Filter {
  const user = userOf(context)
  if (!user) throw new NotAuthenticated('Sign in first')
  return { createdBy: { eq: user.id } }
}

/** SubTask: the same rule written carelessly, missing its value without a user (a 401, never everything). */
const carelessOwnRecords = (context: HookContext): Filter => ({ createdBy: { eq: userOf(context)?.id } })

export const clientTodoItems = defineResource({
  ...todoItemResource,
  multi: true,
  maxMulti: MAX_MULTI,
  authorize: ownRecords
})

/** Without multi, where the example has it: the many-record methods of such a resource are 405s. */
export const clientSubTasks = defineResource({
  ...subTaskResource,
  multi: false,
  authorize: carelessOwnRecords
})

function stampOwner(context: HookContext) {
  const now = new Date().toISOString()
  const owner = userOf(context)?.id ?? null
  const stamp = (record: object) => ({
    ...record,
    created: now,
    updated: now,
    createdBy: owner,
    updatedBy: owner
  })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
}

function stampUpdate(context: HookContext) {
  context.data = {
    ...context.data,
    updated: new Date().toISOString(),
    updatedBy: userOf(context)?.id ?? null
  }
}

/**
 * The common recipe for letting clients turn paging off: `$paginate: false` in the query sets
 * `params.paginate` (Feathers clients send nothing but the query).
 */
function clientPaginate(context: HookContext) {
  const { $paginate, ...query } = context.params.query ?? {}
  if ($paginate === undefined) return
  context.params = { ...context.params, query }
  if ($paginate === false || $paginate === 'false') context.params.paginate = false
}

/** Writes an audit row per created TodoItem through a @feathersjs/knex service on the same knex. */
async function auditCreation(context: HookContext) {
  const records = (Array.isArray(context.result) ? context.result : [context.result]) as Array<{
    id: number
    title: string
  }>
  for (const record of records) {
    await context.app.service('audit-log').create({ todoItemId: record.id, action: 'created' })
  }
  if (records.some((record) => record.title === FAIL_AFTER_AUDIT)) {
    throw new BadRequest('The audit hook failed after writing')
  }
}

type TodoRecord = { title: string; createdBy?: string | null }

/** resolveResult: a virtual field every caller sees (internal ones too). */
const todoResultResolver = resolve<TodoRecord & { shout?: string }, HookContext>({
  shout: virtual(async (item) => item.title.toUpperCase())
})

/** resolveExternal: what clients see; reads a hidden field, which the hook may, and does not drop it. */
const todoExternalResolver = resolve<TodoRecord & { mine?: boolean }, HookContext>({
  mine: virtual(async (item, context) => item.createdBy != null && item.createdBy === userOf(context)?.id)
})

/**
 * An application-wide resolveExternal, outside every service's hooks: its dispatch is made from
 * `context.result`, or is the one the service's resolveExternal made, and both hold the hidden fields.
 */
const appExternalResolver = resolve<{ servedBy?: string }, HookContext>({
  servedBy: virtual(async (_record, context): Promise<string | undefined> =>
    context.path === 'sub-tasks' ? 'feathers-app' : undefined
  )
})

/**
 * An application-wide hook that, after the resolvers, decorates what clients get the way Feathers 4 apps do:
 * from the result, hidden fields included. The plugin must still strip them.
 */
async function decorateSubTaskGets(context: HookContext, next: NextFunction) {
  await next()
  if (context.path === 'sub-tasks' && context.method === 'get' && context.params.provider) {
    context.dispatch = { ...context.result, decorated: true }
  }
}

/**
 * The same, registered before the plugin (an application configured in another order): it runs outside the
 * plugin's own stripping, and what it makes `context.dispatch` must be stripped all the same.
 */
async function decorateTodoGetsEarly(context: HookContext, next: NextFunction) {
  await next()
  if (context.path === 'todo-items' && context.method === 'get' && context.params.provider) {
    // What the hooks inside made of the record, with the result's fields merged back in.
    context.dispatch = { ...context.result, ...context.dispatch, decoratedEarly: true }
  }
}

export interface FeathersAppOptions {
  /** Configure feathersQuery before rest() and socketio(), which start-up must refuse. */
  transportsAfterPlugin?: boolean
  /** The plugin's `realtime.maxConnectionsPerUser` (its default otherwise). */
  maxConnectionsPerUser?: number
}

export function createFeathersApp(options: FeathersAppOptions = {}) {
  return async (databaseUrl: string): Promise<{ app: Application; db: Knex }> => {
    const db = knex(knexConfig(databaseUrl))
    await migrateLatest(db)
    await db.schema.createTable('audit_log', (table) => {
      table.increments('id')
      table.integer('todoItemId').notNullable()
      table.string('action').notNullable()
    })

    const app = jwtApp()
    app.hooks({ around: { all: [decorateTodoGetsEarly] } })
    const plugin = feathersQuery({
      Model: db,
      resources: [clientTodoItems, clientSubTasks, ...tagResources],
      logger: { error: () => {} },
      realtime: options.maxConnectionsPerUser
        ? { maxConnectionsPerUser: options.maxConnectionsPerUser }
        : undefined
    })
    if (options.transportsAfterPlugin) app.configure(plugin)
    app.configure(rest())
    app.configure(socketio())

    // The users service is internal only.
    useJwtAuthentication(app, { methods: [] })
    app.use('audit-log', new KnexService({ Model: db, name: 'audit_log' }), { methods: [] })
    if (!options.transportsAfterPlugin) app.configure(plugin)

    const jwt = authenticate('jwt')
    // The record resolvers on the record methods: aggregate answers groups, not records.
    const resolvers = [resolveExternal(todoExternalResolver), resolveResult(todoResultResolver)]
    app.service('todo-items').hooks({
      around: {
        find: resolvers,
        get: resolvers,
        create: resolvers,
        update: resolvers,
        patch: resolvers,
        remove: resolvers
      },
      before: {
        // Per method, not a guard: authorize runs when the method runs, after these.
        find: [jwt, clientPaginate],
        get: [jwt],
        create: [jwt, stampOwner],
        update: [jwt, stampUpdate],
        patch: [jwt, stampUpdate],
        remove: [jwt]
      },
      after: { create: [auditCreation] }
    })
    // `aggregate` is the resource service's own method, which Feathers' hook types do not list.
    ;(app.service('todo-items') as unknown as FeathersService<Application, ResourceService>).hooks({
      before: { aggregate: [jwt] }
    })
    app.service('sub-tasks').hooks({
      around: { all: [jwt] },
      before: { create: [stampOwner], update: [stampUpdate], patch: [stampUpdate] }
    })

    app.on('login', (_result: unknown, params: { connection?: unknown }) => {
      if (params.connection) app.channel('authenticated').join(params.connection as never)
    })
    app.publish(authorizedPublisher(() => app.channel('authenticated')))

    app.hooks({ around: { all: [decorateSubTaskGets, resolveExternal(appExternalResolver)] } })
    return { app, db }
  }
}
