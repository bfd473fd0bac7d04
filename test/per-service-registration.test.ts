import assert from 'node:assert/strict'
import type { AuthenticationResult } from '@feathersjs/authentication'
import { feathers, type HookContext, type Params, type RealTimeConnection } from '@feathersjs/feathers'
import { koa, rest, type Application } from '@feathersjs/koa'
import socketio from '@feathersjs/socketio'
import socketioClient from '@feathersjs/socketio-client'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { io } from 'socket.io-client'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { tagResources } from '../example/resources'
import {
  ConfigurationError,
  defineResource,
  feathersQuery,
  feathersQueryState,
  FilterableField,
  IDField
} from '../src'
import {
  accessToken,
  bearer,
  jwtApp,
  securedSubTasks,
  securedTodoItems,
  useJwtAuthentication
} from './support/auth-app'
import { graphql } from './support/graphql'
import { forEachDatabase, type TestServer } from './support/server'

/** The owner of what a user creates, as a CLI app's before-create hook would set it. */
const stampOwner = (context: HookContext) => {
  const owner = (context.params.user as { id: string } | undefined)?.id ?? null
  const now = new Date().toISOString()
  context.data = { ...context.data, created: now, updated: now, createdBy: owner, updatedBy: owner }
}

/** The service files of a CLI app: each registers its own resource, in whatever order index.ts lists them. */
const subTasksService = (app: Application) => {
  app.configure(feathersQuery({ Model: app.get('db'), resources: [securedSubTasks] }))
  app.service('sub-tasks').hooks({ before: { create: [stampOwner] } })
}
const tagsService = (app: Application) => {
  app.configure(feathersQuery({ Model: app.get('db'), resources: tagResources }))
  app.service('tags').hooks({ before: { create: [stampOwner] } })
}
const todoItemsService = (app: Application) => {
  app.configure(feathersQuery({ Model: app.get('db'), resources: [securedTodoItems] }))
  app.service('todo-items').hooks({ before: { create: [stampOwner] } })
}

/** `src/channels.ts` as the Feathers CLI generates it: every event to every authenticated connection. */
const generatedChannels = (app: Application) => {
  app.on('connection', (connection: RealTimeConnection) => app.channel('anonymous').join(connection))
  app.on('login', (_result: AuthenticationResult, { connection }: Params) => {
    if (connection) {
      app.channel('anonymous').leave(connection)
      app.channel('authenticated').join(connection)
    }
  })
  app.publish(() => app.channel('authenticated'))
}

const logged: string[] = []

async function cliLikeApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  const app = jwtApp({ pluginLogger: true })
  app.set('db', db)
  app.set('paginate', { default: 2, max: 3 })
  app.configure(rest())
  app.configure(socketio())
  useJwtAuthentication(app)
  app.configure(subTasksService)
  app.configure(tagsService)
  app.configure(todoItemsService)
  app.configure(
    feathersQuery({ Model: db, resources: [], logger: { error: (message) => logged.push(message) } })
  )
  app.configure(generatedChannels)
  app.hooks({
    before: {
      find: [
        (context: HookContext) => {
          if (context.params.headers?.['x-break'] === 'yes') throw new TypeError('broken on purpose')
        }
      ]
    }
  })
  return { app, db }
}

async function socketUser(server: TestServer, user: string) {
  const connection = io(server.baseUrl, { transports: ['websocket'], forceNew: true, reconnection: false })
  const client = feathers().configure(socketioClient(connection))
  await client
    .service('authentication')
    .create({ strategy: 'jwt', accessToken: await accessToken(server, user) })
  const created: Array<{ title: string }> = []
  client.service('todo-items').on('created', (record: { title: string }) => created.push(record))
  const tags: unknown[] = []
  client.service('tags').on('created', (tag: unknown) => tags.push(tag))
  return { client, connection, created, tags }
}

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 5000
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

forEachDatabase(
  'Per-service registration: one feathersQuery() per service file',
  (env) => {
    const as = async (user: string) => bearer(await accessToken(env.server, user))

    it('serves one GraphQL schema and one OpenAPI document over every registration, relations across them', async () => {
      const state = feathersQueryState(env.server.app)!
      assert.deepEqual(state.resources.map((resource) => resource.name).sort(), [
        'SubTask',
        'Tag',
        'TodoItem',
        'TodoItemTag'
      ])
      const paths = Object.keys(state.openApiDocument!.paths)
      for (const path of ['/todo-items', '/sub-tasks', '/tags']) assert.ok(paths.includes(path), path)
      const ann = await as('ann')
      const todo = await env.server.http('POST', '/todo-items', { title: 'across calls' }, ann)
      assert.equal(todo.status, 201, todo.text)
      const task = await env.server.http(
        'POST',
        '/sub-tasks',
        { title: 'a step', todoItemId: String(todo.body.id) },
        ann
      )
      assert.equal(task.status, 201, task.text)
      const answer = await graphql(
        env.server,
        `{ todoItem(id: "${todo.body.id}") { title subTasks { edges { node { title todoItem { title } } } } } }`,
        undefined,
        ann
      )
      assert.deepEqual(answer.errors, undefined)
      assert.deepEqual(answer.data, {
        todoItem: {
          title: 'across calls',
          subTasks: { edges: [{ node: { title: 'a step', todoItem: { title: 'across calls' } } }] }
        }
      })
    })

    it("takes its page sizes from the application's paginate where a resource sets none", async () => {
      const bob = await as('bob')
      for (const title of ['b1', 'b2', 'b3', 'b4', 'b5']) {
        assert.equal((await env.server.http('POST', '/todo-items', { title }, bob)).status, 201)
      }
      const list = await env.server.http('GET', '/todo-items', undefined, bob)
      assert.equal(list.body.nodes.length, 2)
      assert.equal((await env.server.http('GET', '/todo-items?limit=4', undefined, bob)).status, 400)
      const feathersHeaders = { ...bob, 'x-query-syntax': 'feathers' }
      const page = await env.server.http('GET', '/todo-items?$limit=10', undefined, feathersHeaders)
      assert.deepEqual([page.body.total, page.body.limit, page.body.data.length], [5, 3, 3])
      const gql = await graphql(env.server, '{ todoItems { edges { node { title } } } }', undefined, bob)
      assert.equal(gql.data.todoItems.edges.length, 2)
    })

    it("sends no event to a connection whose user the resource's authorize does not admit, with the CLI's channels", async () => {
      const ann = await socketUser(env.server, 'ann')
      const bob = await socketUser(env.server, 'bob')
      // Eve is suspended: the rule throws for her, which admits nothing.
      const eve = await socketUser(env.server, 'eve')
      try {
        await ann.client.service('todo-items').create({ title: 'for ann only' })
        await bob.client.service('todo-items').create({ title: 'for bob only' })
        // Each hears their own; events are sent in order, so once Bob has his, Ann's would have come first.
        await until(() => bob.created.length === 1 && ann.created.length === 1, 'both events')
        // Whatever Eve was sent of those went out with them; a later event of a rule-free resource follows it.
        await env.server.app.service('tags').create({ name: 'after the items' })
        await until(() => eve.tags.length === 1, "Eve's tag event")
        assert.deepEqual(eve.created, [])
        assert.deepEqual(
          bob.created.map((record) => record.title),
          ['for bob only']
        )
        assert.deepEqual(
          ann.created.map((record) => record.title),
          ['for ann only']
        )
      } finally {
        ann.connection.close()
        bob.connection.close()
        eve.connection.close()
      }
    })

    it("answers Feathers' REST client's custom method aggregate, with no header of its own", async () => {
      const ann = await as('ann')
      const response = await env.server.http(
        'POST',
        '/todo-items',
        { count: ['id'] },
        {
          ...ann,
          'x-service-method': 'aggregate'
        }
      )
      assert.equal(response.status, 200, response.text)
      assert.ok(Array.isArray(response.body) && typeof response.body[0].count.id === 'number', response.text)
    })

    it('logs the failures of every surface through the one logger', async () => {
      logged.length = 0
      const ann = await as('ann')
      const broken = { ...ann, 'x-break': 'yes' }
      assert.equal((await env.server.http('GET', '/todo-items', undefined, broken)).status, 500)
      const answer = await graphql(env.server, '{ todoItems { totalCount } }', undefined, broken)
      assert.equal(answer.errors?.[0].extensions?.code, 'INTERNAL_SERVER_ERROR')
      assert.equal(logged.length, 2, logged.join('\n----\n'))
      for (const message of logged) assert.match(message, /TypeError: broken on purpose/)
    })
  },
  cliLikeApp
)

describe('Per-service registration: mistakes are start-up errors that name both sides', () => {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  // The tables the resources name, which setup checks.
  before(async () => {
    await db.schema.createTable('parents', (table) => {
      table.integer('id').primary()
      table.string('name').notNullable()
    })
    await db.schema.createTable('childs', (table) => {
      table.integer('id').primary()
      table.integer('parentId').notNullable()
    })
  })
  after(() => db.destroy())
  const parent = defineResource({
    name: 'Parent',
    schema: Type.Object({ id: IDField(Type.Integer()), name: FilterableField(Type.String()) }),
    many: { children: { resource: 'Child', foreignKey: 'parentId' } }
  })
  const child = defineResource({
    name: 'Child',
    basePath: 'children',
    schema: Type.Object({ id: IDField(Type.Integer()), parentId: FilterableField(Type.Integer()) })
  })
  const refuses = (error: unknown, pattern: RegExp) =>
    error instanceof ConfigurationError && pattern.test(error.message)

  it('links relations whatever order the calls come in', async () => {
    const app = koa(feathers())
    app.configure(feathersQuery({ Model: db, resources: [parent] }))
    app.configure(feathersQuery({ Model: db, resources: [child] }))
    await app.setup()
    const resources = feathersQueryState(app)!.resources
    assert.equal(resources[0].relationMap.get('children')?.target, resources[1])
  })

  it('refuses a relation to a resource no call registered, saying what to register', async () => {
    const app = koa(feathers())
    app.configure(feathersQuery({ Model: db, resources: [parent] }))
    // Registering is fine; the relation is checked once every service file has had its turn.
    await assert.rejects(app.setup(), (error) =>
      refuses(
        error,
        /Parent\.children relates to unknown resource "Child": no feathersQuery\(\) call registered it/
      )
    )
  })

  it('refuses the same resource registered twice, naming both calls', () => {
    const app = koa(feathers())
    app.configure(feathersQuery({ Model: db, resources: [parent, child] }))
    assert.throws(
      () => app.configure(feathersQuery({ Model: db, resources: [child] })),
      (error) =>
        refuses(
          error,
          /Child is registered twice: by the feathersQuery\(\) call registering Parent, Child .* and by the feathersQuery\(\) call registering Child/
        )
    )
  })

  it('refuses a base path another service holds, rather than replacing it', () => {
    const app = koa(feathers())
    app.use('children', {
      async find() {
        return []
      }
    })
    assert.throws(
      () => app.configure(feathersQuery({ Model: db, resources: [child] })),
      (error) => refuses(error, /Child: a service is already registered at "children"/)
    )
  })

  it('refuses application-wide options given by two calls, and a call after setup', async () => {
    const app = koa(feathers())
    app.configure(feathersQuery({ Model: db, resources: [parent], graphql: { path: '/gql' } }))
    assert.throws(
      () => app.configure(feathersQuery({ Model: db, resources: [child], graphql: { path: '/other' } })),
      (error) =>
        refuses(
          error,
          /feathersQuery\(\{ graphql \}\) is given twice: by the feathersQuery\(\) call registering Parent and by/
        )
    )
    const later = koa(feathers())
    later.configure(feathersQuery({ Model: db, resources: [child] }))
    await later.setup()
    assert.throws(
      () => later.configure(feathersQuery({ Model: db, resources: [] })),
      (error) => refuses(error, /called after the application was set up/)
    )
  })

  it("reads the configuration's feathersQuery, checked, and paginate, checked", async () => {
    const configured = koa(feathers())
    configured.set('feathersQuery', { graphql: { path: '/gql' }, openapi: false })
    configured.configure(feathersQuery({ Model: db, resources: [child] }))
    await configured.setup()
    assert.equal(feathersQueryState(configured)!.graphqlPath, '/gql')
    assert.equal(feathersQueryState(configured)!.openApiDocument, undefined)

    const wrong = koa(feathers())
    wrong.set('feathersQuery', { graphql: { path: 'gql' }, limits: { maxFilterDepth: 0 }, extra: 1 })
    assert.throws(
      () => wrong.configure(feathersQuery({ Model: db, resources: [child] })),
      (error) =>
        refuses(
          error,
          /configuration's feathersQuery is invalid: .*\(extra\); graphql\.path must match .*; limits\.maxFilterDepth must be >= 1$/
        )
    )
    const badPaginate = koa(feathers())
    badPaginate.set('paginate', { default: 20, max: 10 })
    assert.throws(
      () => badPaginate.configure(feathersQuery({ Model: db, resources: [child] })),
      (error) => refuses(error, /paginate: default 20 is larger than max 10/)
    )
  })
})
