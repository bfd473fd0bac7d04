import { AuthenticationService, JWTStrategy, authenticate } from '@feathersjs/authentication'
import { Forbidden, NotAuthenticated, NotFound } from '@feathersjs/errors'
import { feathers, type FeathersService, type HookContext, type Id } from '@feathersjs/feathers'
import { bodyParser, koa, parseAuthentication, type Application } from '@feathersjs/koa'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { subTaskResource } from '../../example/resources/sub-task'
import { tagResources } from '../../example/resources'
import { todoItemResource } from '../../example/resources/todo-item'
import {
  defineResource,
  errorHandler,
  feathersQuery,
  FilterableField,
  IDField,
  type Filter,
  type ResourceService
} from '../../src'
import type { TestServer } from './server'

/**
 * An application secured the way a Feathers deployer does it: a real AuthenticationService with the JWT
 * strategy, `parseAuthentication()` in front of the routes, `authenticate('jwt')` as a guard, and `authorize`
 * rules that let each user see only their own records.
 */

export interface User {
  id: string
  suspended?: boolean
  teams?: string[]
}

export const users: Record<string, User> = {
  ann: { id: 'ann', teams: ['red'] },
  bob: { id: 'bob', teams: [] },
  eve: { id: 'eve', suspended: true }
}

/** The entity service of the JWT strategy: a plain in-memory Feathers service. */
export class UserService {
  readonly id = 'id'

  async get(id: Id) {
    const user = users[String(id)]
    if (!user) throw new NotFound(`No user ${id}`)
    return user
  }
}

const requireJwt = authenticate('jwt')

/** Authenticates when a token came with the request; anonymous requests go on without a user. */
const authenticateIfToken = (context: HookContext) =>
  context.params.authentication ? requireJwt(context) : undefined

const userOf = (context: HookContext) => context.params.user as User | undefined

/** Everyone sees and changes their own records only; a suspended user nothing at all. */
function ownRecords(context: HookContext): Filter {
  const user = userOf(context)
  if (!user) throw new NotAuthenticated('Sign in first')
  if (user.suspended) throw new Forbidden(`${user.id} is suspended`)
  return { createdBy: { eq: user.id } }
}

/** The deployer's before-create hook: the server owns the timestamps and the owner. */
function stampOwner(context: HookContext) {
  const now = new Date().toISOString()
  const owner = userOf(context)?.id ?? null
  context.data = { ...context.data, created: now, updated: now, createdBy: owner, updatedBy: owner }
}

/** A deployer's before-find/aggregate hook, switched on per request: leaves completed records out. */
function hideCompletedOnRequest(context: HookContext) {
  if (context.params.headers?.['x-hide-completed'] !== 'yes') return
  const query = context.params.query ?? {}
  context.params = {
    ...context.params,
    query: { ...query, filter: { and: [query.filter ?? {}, { completed: { is: false } }] } }
  }
}

export const securedTodoItems = defineResource({
  ...todoItemResource,
  guards: [requireJwt],
  authorize: ownRecords
})

export const securedSubTasks = defineResource({
  ...subTaskResource,
  // The export must still apply authorize when the generated filter parameters are gone.
  query: { ...subTaskResource.query, disableFilter: true },
  guards: [requireJwt],
  authorize: ownRecords
})

/** Public reads; only signed-in users write (guards on create, update.one and delete.one). */
export const announcementResource = defineResource({
  name: 'Announcement',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    text: FilterableField(Type.String())
  }),
  create: { guards: [requireJwt] },
  update: { one: { guards: [requireJwt] } },
  delete: { one: { guards: [requireJwt] } }
})

/**
 * Notes carry a writable owner, so a client can try to create or move one outside what it may access.
 * Anonymous requests pass the guard and are refused by authorize.
 */
export const noteResource = defineResource({
  name: 'Note',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    owner: FilterableField(Type.String()),
    text: FilterableField(Type.String())
  }),
  guards: [authenticateIfToken],
  authorize(context) {
    const user = userOf(context)
    if (!user) throw new NotAuthenticated('Sign in to read notes')
    if (user.suspended) throw new Forbidden(`${user.id} is suspended`)
    return { owner: { eq: user.id } }
  }
})

/**
 * Authorization rules written carelessly for anonymous callers, chosen per request by the `x-rule` header:
 * each leaves a value missing when there is no user (or the user has no team). None may let anything
 * through.
 */
export const draftRules: Record<string, (user: User | undefined) => Filter> = {
  'eq undefined': (user) => ({ author: { eq: user?.id } }),
  'in undefined': (user) => ({ author: { in: user && [user.id] } }),
  'field undefined': (user) => ({ author: user && { eq: user.id } }),
  'no operator': (user) => ({ author: user ? { eq: user.id } : {} }),
  'or over no team': (user) => ({ or: (user?.teams ?? []).map((team) => ({ team: { eq: team } })) }),
  nested: (user) => ({ and: [{ or: [{ author: { eq: user?.id } }] }] })
}

export const draftResource = defineResource({
  name: 'Draft',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    author: FilterableField(Type.String()),
    team: FilterableField(Type.String()),
    text: FilterableField(Type.String())
  }),
  guards: [authenticateIfToken],
  enableAggregate: true,
  authorize: (context) => draftRules[String(context.params.headers?.['x-rule'])](userOf(context))
})

export const JWT_SECRET = 'feathers-query test secret, long enough for HS256'

/**
 * A Koa app with JWT settings, Feathers error JSON (quiet, or logged through the plugin's logger with
 * `pluginLogger`), parsed authentication and bodies.
 */
export function jwtApp(options: { pluginLogger?: boolean } = {}): Application {
  const app = koa(feathers())
  app.set('authentication', {
    secret: JWT_SECRET,
    entity: 'user',
    service: 'users',
    authStrategies: ['jwt'],
    jwtOptions: { expiresIn: '1h' }
  })
  app.use(options.pluginLogger ? errorHandler() : errorHandler(() => {}))
  app.use(parseAuthentication())
  app.use(bodyParser())
  return app
}

/** The in-memory `users` service and an AuthenticationService with the JWT strategy. */
export function useJwtAuthentication(app: Application, userOptions?: { methods: string[] }) {
  app.use('users', new UserService(), userOptions)
  const authentication = new AuthenticationService(app)
  authentication.register('jwt', new JWTStrategy())
  app.use('authentication', authentication)
}

export async function createAuthApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  await db.schema.createTable('announcements', (table) => {
    table.increments('id')
    table.string('text').notNullable()
  })
  await db.schema.createTable('notes', (table) => {
    table.increments('id')
    table.string('owner').notNullable()
    table.string('text').notNullable()
  })
  await db.schema.createTable('drafts', (table) => {
    table.increments('id')
    table.string('author').notNullable()
    table.string('team').notNullable()
    table.string('text').notNullable()
  })

  const app = jwtApp()
  useJwtAuthentication(app)
  app.configure(
    feathersQuery({
      Model: db,
      resources: [
        securedTodoItems,
        securedSubTasks,
        ...tagResources,
        announcementResource,
        noteResource,
        draftResource
      ],
      logger: { error: () => {} }
    })
  )
  const todoItems = app.service('todo-items') as unknown as FeathersService<Application, ResourceService>
  todoItems.hooks({
    before: { create: [stampOwner], find: [hideCompletedOnRequest], aggregate: [hideCompletedOnRequest] }
  })
  app.service('sub-tasks').hooks({ before: { create: [stampOwner] } })
  return { app, db }
}

/** A signed access token for `userId`, made by the application's own AuthenticationService. */
export function accessToken(server: TestServer, userId: string, options: Record<string, unknown> = {}) {
  const service = server.app.service('authentication') as unknown as AuthenticationService
  return service.createAccessToken({ sub: userId }, options)
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
