import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import socketioClient from '@feathersjs/socketio-client'
import { Forbidden } from '@feathersjs/errors'
import { Type } from '@sinclair/typebox'
import { createClient, type Client } from 'graphql-ws'
import knex from 'knex'
import { io, type Socket } from 'socket.io-client'
import WebSocket from 'ws'
import { andFilters, authorizedPublisher, defineResource, FilterableField, IDField } from '../src'
import { knexConfig } from '../example/database'
import { wsUrl } from './support/graphql-ws'
import { pluginApp } from './support/plugin-app'
import { forEachDatabase, type TestServer } from './support/server'
import { pollUntil } from './support/eventually'
import { graphql } from './support/graphql'
import { accessToken } from './support/auth-app'
import { createFeathersApp, HIDDEN_FIELDS } from './support/feathers-app'

/** A caller's team is its `x-team` header: each sees its own team's tasks; admins see every field. */
const teamOf = (params: { headers?: Record<string, unknown> }) =>
  params.headers?.['x-team'] as string | undefined

/** Users whose rights ended: `authorize` refuses them from then on. */
const banned = new Set<string>()

const tasks = defineResource({
  name: 'Task',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    title: FilterableField(Type.String()),
    team: FilterableField(Type.String()),
    points: FilterableField(Type.Integer()),
    done: FilterableField(Type.Boolean())
  }),
  many: {
    comments: { resource: 'Comment', foreignKey: 'taskId', pagingStrategy: 'offset', filterable: true }
  },
  graphql: { pagingStrategy: 'offset' },
  query: { enableTotalCount: true, defaultSort: [{ field: 'id', direction: 'ASC' }] },
  enableAggregate: true,
  authorize: (context) => {
    if (banned.has(context.params.headers?.['x-user'])) throw new Forbidden('Your access ended')
    return { team: { eq: teamOf(context.params) ?? '' } }
  },
  fieldRules: (params) => (params.headers?.['x-role'] === 'admin' ? undefined : { points: { read: false } })
})

const comments = defineResource({
  name: 'Comment',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    text: FilterableField(Type.String()),
    taskId: FilterableField(Type.Integer())
  }),
  one: { task: { resource: 'Task', foreignKey: 'taskId' } },
  // Secret comments are for callers who say they may read them.
  authorize: (context) =>
    context.params.headers?.['x-secret'] === 'yes' ? undefined : { text: { notLike: 'secret%' } }
})

/** Notes: a version the plugin counts up on each write, and a field the database computes from the title. */
const notes = defineResource({
  name: 'Note',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    title: FilterableField(Type.String()),
    version: FilterableField(Type.Integer({ readOnly: true })),
    shout: FilterableField(Type.String({ readOnly: true }))
  }),
  concurrency: { version: 'version' },
  sqlComputed: {
    shout: ({ knex, column, dialect }) =>
      dialect === 'mysql'
        ? knex.raw("CONCAT(?, '!')", [column('title')])
        : knex.raw("? || '!'", [column('title')])
  },
  graphql: { pagingStrategy: 'offset' }
})

async function liveApp(databaseUrl: string, plugin: object = {}) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('tasks', (columns) => {
    columns.increments('id')
    columns.string('title').notNullable()
    columns.string('team').notNullable()
    columns.integer('points').notNullable()
    columns.boolean('done').notNullable()
  })
  await db.schema.createTable('comments', (columns) => {
    columns.increments('id')
    columns.string('text').notNullable()
    columns.integer('taskId').notNullable()
  })
  await db('tasks').insert([
    { title: 'a1', team: 'a', points: 1, done: false },
    { title: 'b1', team: 'b', points: 2, done: false }
  ])
  await db('comments').insert([{ text: 'first', taskId: 1 }])
  await db.schema.createTable('notes', (columns) => {
    columns.increments('id')
    columns.string('title').notNullable()
    columns.integer('version').notNullable()
  })
  await db('notes').insert([{ title: 'hello', version: 1 }])
  const made = pluginApp(db, [tasks, comments, notes], {
    transports: true,
    plugin: { live: { coalesceMs: 20 }, ...plugin }
  })
  const { app } = made
  // As generated Feathers apps do: every connection in one channel, every event published to it (through the
  // plugin's publisher, which keeps each resource's records to the callers allowed to read them).
  app.on('connection', (connection: any) => app.channel('everyone').join(connection))
  app.publish(authorizedPublisher(() => app.channel('everyone')))
  // A before hook that narrows a caller's reads of comments: `x-mine` callers read only their own ('mine ...').
  app.service('comments').hooks({
    before: {
      find: [
        (context: any) => {
          if (!context.params.headers?.['x-mine'] || !context.params.queryModel) return
          const query = context.params.query ?? {}
          context.params.query = { ...query, filter: andFilters(query.filter, { text: { like: 'mine%' } }) }
        }
      ]
    }
  })
  // A slow first read for callers that ask for it: a client can leave while its live query starts.
  app.service('tasks').hooks({
    before: {
      find: [
        async (context: any) => {
          if (context.params.headers?.['x-slow']) await new Promise((resolve) => setTimeout(resolve, 300))
        },
        // A hook that takes its own parameter out of the query in place, as Feathers hooks may: `$open` asks
        // for the tasks not done.
        (context: any) => {
          const query = context.params.query
          if (query?.$open === undefined) return
          const open = query.$open
          delete query.$open
          if (open) context.params.query = { ...query, done: false }
        }
      ]
    }
  })
  return made
}

const A = { 'x-team': 'a' }
const B = { 'x-team': 'b' }
const ADMIN_A = { 'x-team': 'a', 'x-role': 'admin' }

/** A graphql-ws client whose upgrade request carries `headers` (the connection's params). */
function wsClient(server: TestServer, headers: Record<string, string>): Client {
  class WithHeaders extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers })
    }
  }
  return createClient({ url: wsUrl(server), webSocketImpl: WithHeaders, retryAttempts: 0, lazy: true })
}

interface LiveWatch {
  results: any[]
  errors: any[]
  stop(): void
}

function subscribe(client: Client, query: string, variables?: Record<string, unknown>): LiveWatch {
  const watch: LiveWatch = { results: [], errors: [], stop: () => {} }
  watch.stop = client.subscribe(
    { query, variables },
    {
      next: (result) =>
        result.errors ? watch.errors.push(...result.errors) : watch.results.push(result.data),
      error: (error) => {
        if (process.env.DEBUG_LIVE) console.log('error', error)
        watch.errors.push(...(Array.isArray(error) ? error : [error]))
      },
      complete: () => {}
    }
  )
  return watch
}

const LIST = `subscription Open {
  tasks(filter: { done: { is: false } }) { totalCount nodes { title comments { nodes { text } } } }
}`

const titles = (result: any) => result.tasks.nodes.map((node: any) => node.title)

forEachDatabase(
  'Live queries: a result pushed again when a write changes it',
  (env) => {
    const clients: Client[] = []
    const sockets: Socket[] = []
    const client = (headers: Record<string, string>) => {
      const made = wsClient(env.server, headers)
      clients.push(made)
      return made
    }
    const post = (headers: Record<string, string>, path: string, body: unknown) =>
      env.server.http('POST', path, body, headers)
    const until = (condition: () => boolean, what: string) => pollUntil(condition, what, { ms: 5000 })
    /** A Feathers client over socket.io whose connection carries `headers`, closed after each test. */
    const connect = (headers: Record<string, string>) => {
      const socket = io(env.server.baseUrl, { extraHeaders: headers, transports: ['websocket'] })
      sockets.push(socket)
      return feathers().configure(socketioClient(socket))
    }

    afterEach(async () => {
      await Promise.all(clients.splice(0).map((made) => made.dispose()))
      for (const socket of sockets.splice(0)) socket.close()
      await env.server.db('comments').where('id', '>', 1).delete()
      await env.server.db('tasks').where('id', '>', 2).delete()
      await env.server.db('notes').where('id', 1).update({ title: 'hello', version: 1 })
    })

    it('answers the query at once, then again after each write that changes it, relations included', async () => {
      const watch = subscribe(client(A), LIST)
      await until(() => watch.results.length === 1, 'the first result')
      assert.deepEqual(watch.results[0], {
        tasks: { totalCount: 1, nodes: [{ title: 'a1', comments: { nodes: [{ text: 'first' }] } }] }
      })
      assert.equal((await post(A, '/tasks', { title: 'a2', team: 'a', points: 3, done: false })).status, 201)
      await until(() => watch.results.length === 2, 'the result after a create')
      assert.deepEqual(titles(watch.results[1]), ['a1', 'a2'])
      assert.equal(watch.results[1].tasks.totalCount, 2)
      // A write to a related resource changes it too.
      assert.equal((await post(A, '/comments', { text: 'second', taskId: 1 })).status, 201)
      await until(() => watch.results.length === 3, 'the result after a comment')
      assert.deepEqual(watch.results[2].tasks.nodes[0].comments.nodes, [
        { text: 'first' },
        { text: 'second' }
      ])
      assert.deepEqual(watch.errors, [])
    })

    it('pushes nothing for a write it may not see or that its filter leaves out', async () => {
      const watch = subscribe(client(A), LIST)
      await until(() => watch.results.length === 1, 'the first result')
      // Another team's task, and a done one of its own: the result is the same, so nothing comes.
      assert.equal((await post(B, '/tasks', { title: 'b2', team: 'b', points: 1, done: false })).status, 201)
      assert.equal(
        (await post(A, '/tasks', { title: 'a-done', team: 'a', points: 1, done: true })).status,
        201
      )
      assert.equal(
        (await post(A, '/tasks', { title: 'a-sentinel', team: 'a', points: 1, done: false })).status,
        201
      )
      await until(() => watch.results.length >= 2, 'the sentinel')
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(watch.results.length, 2)
      assert.deepEqual(titles(watch.results[1]), ['a1', 'a-sentinel'])
    })

    it('each subscriber sees its own scope, and one computation serves every subscriber of a question and scope', async () => {
      const teamA = Array.from({ length: 8 }, () => subscribe(client(A), LIST))
      const teamB = subscribe(client(B), LIST)
      await until(() => [...teamA, teamB].every((watch) => watch.results.length === 1), 'the first results')
      assert.deepEqual(titles(teamB.results[0]), ['b1'])
      const statements = await env.server.recordStatements(async () => {
        assert.equal(
          (await post(A, '/tasks', { title: 'a3', team: 'a', points: 1, done: false })).status,
          201
        )
        await until(() => teamA.every((watch) => watch.results.length === 2), 'every team-a subscriber')
      })
      for (const watch of teamA) assert.deepEqual(titles(watch.results[1]), ['a1', 'a3'])
      // The page (with its count) once for all eight subscribers of team a, not eight times (team b's question
      // reads comments too, so a task it cannot see still costs its one computation, which delivers nothing).
      const reads = statements.filter((sql) => /__fq_total/.test(sql))
      assert.ok(
        reads.length <= 2,
        `one computation, not one per subscriber: ${reads.length} reads\n${reads.join('\n')}`
      )
      // Team b's result did not change: nothing was pushed to it.
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(teamB.results.length, 1)
    })

    it('follows the tables its filter reaches: a comment can bring a task into a result', async () => {
      const watch = subscribe(
        client(A),
        'subscription { tasks(filter: { comments: { text: { like: "hot%" } } }) { nodes { title } } }'
      )
      await until(() => watch.results.length === 1, 'the first result')
      assert.deepEqual(watch.results[0].tasks.nodes, [])
      assert.equal((await post(A, '/comments', { text: 'hot topic', taskId: 1 })).status, 201)
      await until(() => watch.results.length === 2, 'the task the comment brought')
      assert.deepEqual(watch.results[1].tasks.nodes, [{ title: 'a1' }])
    })

    it('computes nothing for a write certainly outside a question that reads one resource', async () => {
      const query = 'subscription { tasks(filter: { done: { is: false } }) { totalCount nodes { title } } }'
      const watches = [subscribe(client(A), query), subscribe(client(A), query)]
      await until(() => watches.every((watch) => watch.results.length === 1), 'the first results')
      const page = (sql: string) => /__fq_total/.test(sql)
      // Another team's task, a done task, and a patch of a field the filter does not name on a done one.
      // (MariaDB's default collation ignores case, accents and trailing spaces: whether its 'b' is 'a' is
      // for it to say, and the other team's task costs a computation there.)
      const outside = await env.server.recordStatements(async () => {
        if (env.server.database !== 'mysql') {
          const other = await post(B, '/tasks', { title: 'b3', team: 'b', points: 1, done: false })
          assert.equal(other.status, 201)
        }
        const done = await post(A, '/tasks', { title: 'a-done', team: 'a', points: 1, done: true })
        assert.equal(done.status, 201)
        assert.equal(
          (await env.server.http('PATCH', `/tasks/${done.body.id}`, { title: 'renamed' }, A)).status,
          200
        )
        await new Promise((resolve) => setTimeout(resolve, 100))
      })
      assert.deepEqual(outside.filter(page), [])
      // A patch that moves a task into the filter is computed once, for both subscribers.
      const moved = await env.server.recordStatements(async () => {
        assert.equal((await env.server.http('PATCH', '/tasks/2', { done: false }, B)).status, 200)
        const mine = await env.server.db('tasks').where({ title: 'renamed' }).first()
        assert.equal((await env.server.http('PATCH', `/tasks/${mine.id}`, { done: false }, A)).status, 200)
        await until(() => watches.every((watch) => watch.results.length === 2), 'the moved task')
      })
      for (const watch of watches) assert.deepEqual(titles(watch.results[1]), ['a1', 'renamed'])
      assert.ok(moved.filter(page).length <= 2, moved.filter(page).join('\n'))
    })

    it('never shares a result between callers whose scopes differ on a resource not read yet', async () => {
      // Both questions read the same (empty) page now; only their scope of comments tells them apart.
      const query =
        'subscription { tasks(filter: { title: { eq: "new" } }) { nodes { comments { nodes { text } } } } }'
      const secret = subscribe(client({ ...A, 'x-secret': 'yes' }), query)
      await until(() => secret.results.length === 1, 'the first result')
      const plain = subscribe(client(A), query)
      await until(() => plain.results.length === 1, 'the first result')
      const task = await post(A, '/tasks', { title: 'new', team: 'a', points: 1, done: false })
      assert.equal(
        (await post({ ...A, 'x-secret': 'yes' }, '/comments', { text: 'secret plan', taskId: task.body.id }))
          .status,
        201
      )
      assert.equal((await post(A, '/comments', { text: 'open plan', taskId: task.body.id })).status, 201)
      const texts = (watch: LiveWatch) =>
        watch.results.at(-1)?.tasks.nodes[0]?.comments.nodes.map((c: any) => c.text)
      await until(() => texts(secret)?.length === 2 && texts(plain)?.length === 1, 'both results')
      assert.deepEqual(texts(plain), ['open plan'])
      assert.ok(!JSON.stringify(plain.results).includes('secret'))
    })

    it('never shares a result with a caller whose hook narrows a resource the result had not read yet', async () => {
      const query =
        'subscription { tasks(filter: { title: { eq: "hooked" } }) { nodes { comments { nodes { text } } } } }'
      const plain = subscribe(client(A), query)
      await until(() => plain.results.length === 1, 'the first result')
      const mine = subscribe(client({ ...A, 'x-mine': 'yes' }), query)
      await until(() => mine.results.length === 1, 'the first result')
      const task = await post(A, '/tasks', { title: 'hooked', team: 'a', points: 1, done: false })
      assert.equal((await post(A, '/comments', { text: 'mine too', taskId: task.body.id })).status, 201)
      assert.equal((await post(A, '/comments', { text: 'not theirs', taskId: task.body.id })).status, 201)
      const texts = (watch: LiveWatch) =>
        watch.results.at(-1)?.tasks.nodes[0]?.comments.nodes.map((c: any) => c.text)
      await until(() => texts(plain)?.length === 2, "the plain caller's comments")
      await until(() => texts(mine)?.length === 1, "the hooked caller's comments")
      assert.deepEqual(texts(mine), ['mine too'])
      assert.ok(!JSON.stringify(mine.results).includes('not theirs'))
    })

    it('keeps a refusal of the subscriber whose call computed a shared result its own', async () => {
      const first = subscribe(client({ ...A, 'x-user': 'first' }), LIST)
      await until(() => first.results.length === 1, 'the first result')
      const second = subscribe(client({ ...A, 'x-user': 'second' }), LIST)
      await until(() => second.results.length === 1, 'the second result')
      banned.add('first')
      try {
        assert.equal(
          (await post(A, '/tasks', { title: 'a7', team: 'a', points: 1, done: false })).status,
          201
        )
        await until(
          () => second.results.length === 2 && first.errors.length === 1,
          'the refusal and the result'
        )
        assert.equal(first.errors[0].extensions.code, 'FORBIDDEN')
        assert.deepEqual(titles(second.results[1]), ['a1', 'a7'])
        assert.deepEqual(second.errors, [])
        assert.equal(first.results.length, 1)
      } finally {
        banned.delete('first')
      }
    })

    it('coalesces a burst of writes into few results, the last one right', async () => {
      const watch = subscribe(client(A), LIST)
      await until(() => watch.results.length === 1, 'the first result')
      await Promise.all(
        Array.from({ length: 15 }, (_, index) =>
          post(A, '/tasks', { title: `burst${index}`, team: 'a', points: 1, done: false })
        )
      )
      await until(() => watch.results.at(-1)?.tasks.totalCount === 16, 'the burst in the result')
      assert.ok(watch.results.length <= 8, `${watch.results.length} results for 15 writes`)
    })

    it('keeps aggregates live, and refuses a field the caller may not read when it subscribes', async () => {
      const query = 'subscription { taskAggregate { groupBy { done } count { id } } }'
      const watch = subscribe(client(A), query)
      await until(() => watch.results.length === 1, 'the first result')
      assert.deepEqual(watch.results[0].taskAggregate, [{ groupBy: { done: false }, count: { id: 1 } }])
      assert.equal((await post(A, '/tasks', { title: 'a4', team: 'a', points: 1, done: true })).status, 201)
      await until(() => watch.results.length === 2, 'the new groups')
      assert.deepEqual(watch.results[1].taskAggregate, [
        { groupBy: { done: false }, count: { id: 1 } },
        { groupBy: { done: true }, count: { id: 1 } }
      ])
      const refused = subscribe(client(A), 'subscription { tasks { nodes { points } } }')
      await until(() => refused.errors.length > 0, 'the refusal')
      assert.equal(refused.errors[0].extensions.code, 'BAD_USER_INPUT')
      assert.match(JSON.stringify(refused.errors[0]), /points/)
      const admin = subscribe(client(ADMIN_A), 'subscription { tasks { nodes { points } } }')
      await until(() => admin.results.length === 1, 'the admin result')
      assert.deepEqual(admin.results[0].tasks.nodes, [{ points: 1 }, { points: 1 }])
    })

    it('serves Feathers clients over socket.io through the live-queries service, to their own connection only', async () => {
      const ann = connect(A)
      const other = connect(A)
      const heard: any[] = []
      const otherHeard: any[] = []
      ann.service('live-queries').on('result', (event: any) => heard.push(event))
      other.service('live-queries').on('result', (event: any) => otherHeard.push(event))
      const started: any = await ann.service('live-queries').create({ path: 'tasks', query: { done: false } })
      assert.deepEqual(
        started.result.data.map((task: any) => task.title),
        ['a1']
      )
      assert.equal(started.result.data[0].points, undefined)
      await ann.service('tasks').create({ title: 'a5', team: 'a', points: 1, done: false })
      await until(() => heard.length === 1, 'the new result')
      assert.equal(heard[0].id, started.id)
      assert.deepEqual(
        heard[0].result.data.map((task: any) => task.title),
        ['a1', 'a5']
      )
      assert.deepEqual(otherHeard, [])
      await ann.service('live-queries').remove(started.id)
      await ann.service('tasks').create({ title: 'a6', team: 'a', points: 1, done: false })
      await new Promise((resolve) => setTimeout(resolve, 150))
      assert.equal(heard.length, 1)
      await assert.rejects(ann.service('live-queries').create({ path: 'nope' }), { name: 'BadRequest' })
    })

    it('computes each result from the query as the client sent it, whatever a hook did to it in place', async () => {
      const ann = connect(A)
      const heard: any[] = []
      ann.service('live-queries').on('result', (event: any) => heard.push(event))
      await ann.service('tasks').create({ title: 'a-done', team: 'a', points: 1, done: true })
      const started: any = await ann.service('live-queries').create({ path: 'tasks', query: { $open: true } })
      assert.deepEqual(
        started.result.data.map((task: any) => task.title),
        ['a1']
      )
      await ann.service('tasks').create({ title: 'a7', team: 'a', points: 1, done: false })
      await until(() => heard.length === 1, 'the new result')
      assert.deepEqual(
        heard[0].result.data.map((task: any) => task.title),
        ['a1', 'a7']
      )
    })

    it("sends a watch's first result to its own connection only, whatever the app publishes", async () => {
      const ann = connect(A)
      const bob = connect(B)
      const bobHeard: any[] = []
      for (const event of ['created', 'removed', 'result']) {
        bob.service('live-queries').on(event, (data: any) => bobHeard.push([event, data]))
      }
      bob.service('tasks').on('created', (data: any) => bobHeard.push(['task', data]))
      const started: any = await ann.service('live-queries').create({ path: 'tasks', query: { done: false } })
      await ann.service('live-queries').remove(started.id)
      // A sentinel event bob may hear, sent after the others: once it comes, they would have.
      await bob.service('tasks').create({ title: 'b-sentinel', team: 'b', points: 1, done: false })
      await until(() => bobHeard.some(([event]) => event === 'task'), 'the sentinel')
      assert.deepEqual(
        bobHeard.map(([event]) => event),
        ['task']
      )
    })

    it('stops a Feathers watch whose connection closed while it started', async () => {
      const socket = io(env.server.baseUrl, {
        extraHeaders: { ...A, 'x-slow': 'yes' },
        transports: ['websocket']
      })
      sockets.push(socket)
      const client = feathers().configure(socketioClient(socket))
      await new Promise((resolve) => socket.on('connect', () => resolve(undefined)))
      void client
        .service('live-queries')
        .create({ path: 'tasks' })
        .catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 100))
      socket.close()
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.equal(env.server.subscriptionListeners('tasks'), 0)
    })

    it('holds a connection to maxPerConnection watches, however many it asks for at once', async () => {
      const live = connect(A).service('live-queries')
      const settled = await Promise.allSettled(
        Array.from({ length: 14 }, (_, index) => live.create({ path: 'tasks', query: { points: index } }))
      )
      const started = settled.filter((outcome) => outcome.status === 'fulfilled')
      const refused = settled.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[]
      assert.equal(started.length, 10)
      for (const outcome of refused) assert.equal(outcome.reason.code, 429)
    })

    it("follows a patch that changes a filtered field the patch's data does not name", async () => {
      const byVersion = subscribe(
        client(A),
        'subscription { notes(filter: { version: { eq: 1 } }) { nodes { title } } }'
      )
      const byShout = subscribe(
        client(A),
        'subscription { notes(filter: { shout: { eq: "hello!" } }) { nodes { title } } }'
      )
      await until(() => byVersion.results.length === 1 && byShout.results.length === 1, 'the first results')
      assert.deepEqual(byVersion.results[0].notes.nodes, [{ title: 'hello' }])
      assert.deepEqual(byShout.results[0].notes.nodes, [{ title: 'hello' }])
      // The plugin makes the version 2 and the database the shout 'bye!': the note leaves both results.
      assert.equal((await env.server.http('PATCH', '/notes/1', { title: 'bye' }, A)).status, 200)
      await until(() => byVersion.results.length === 2, 'the note gone from the first version')
      await until(() => byShout.results.length === 2, 'the note gone from the shouts')
      assert.deepEqual(byVersion.results[1].notes.nodes, [])
      assert.deepEqual(byShout.results[1].notes.nodes, [])
    })

    it('answers bad input with a 4xx or a GraphQL code, never a 500', async () => {
      const live = connect(A).service('live-queries')
      const bad: unknown[] = [
        null,
        'tasks',
        { path: 'tasks', method: 'get' },
        { path: 'tasks', query: 5 },
        { path: 'tasks', query: { $limit: 'many' } },
        { path: 'tasks', query: { nope: 1 } },
        { path: 'tasks', method: 'aggregate', aggregate: 'x' },
        { path: 'tasks', method: 'aggregate', aggregate: { groupBy: [{ field: 'nope' }] } },
        { path: 'tasks', method: 'aggregate' }
      ]
      for (const data of bad) {
        await assert.rejects(live.create(data as never), (error: any) => {
          if (process.env.DEBUG_LIVE) console.log(JSON.stringify(data), error.code, error.message)
          assert.ok(
            error.code >= 400 && error.code < 500,
            `${JSON.stringify(data)}: ${error.code} ${error.message}`
          )
          return true
        })
      }
      const graphqlBad = [
        'subscription { tasks(filter: { nope: { eq: 1 } }) { nodes { title } } }',
        'subscription { task(id: 999) { title } }'
      ]
      for (const query of graphqlBad) {
        const watch = subscribe(client(A), query)
        await until(() => watch.errors.length > 0, query)
        if (process.env.DEBUG_LIVE) console.log(query, JSON.stringify(watch.errors))
        assert.notEqual(watch.errors[0].extensions?.code ?? 'none', 'INTERNAL_SERVER_ERROR', query)
      }
    })

    it('serves a live query whose root field is written in a fragment', async () => {
      const watch = subscribe(
        client(A),
        'subscription { ...Open } fragment Open on Subscription { tasks { nodes { title } } }'
      )
      await until(() => watch.results.length === 1 || watch.errors.length > 0, 'the first result')
      assert.deepEqual(watch.errors, [])
      assert.deepEqual(titles(watch.results[0]), ['a1'])
    })

    it('skips no write whose text the database compares otherwise than JavaScript (collations)', async () => {
      const questions = [
        '{ tasks(filter: { title: { eq: "mixed" } }) { nodes { title } } }',
        '{ tasks(filter: { title: { gt: "a2" } }) { nodes { title } } }',
        '{ tasks(filter: { title: { like: "mix%" } }) { nodes { title } } }'
      ]
      const watches = questions.map((query) => subscribe(client(A), `subscription ${query}`))
      await until(() => watches.every((watch) => watch.results.length === 1), 'the first results')
      for (const title of ['MIXED', 'mixed ', 'B']) {
        assert.equal((await post(A, '/tasks', { title, team: 'a', points: 1, done: false })).status, 201)
      }
      await new Promise((resolve) => setTimeout(resolve, 300))
      for (const [index, query] of questions.entries()) {
        const answer = await graphql(env.server, query, undefined, A)
        assert.deepEqual(watches[index].results.at(-1), answer.data, query)
      }
    })

    it('stops listening once the last subscriber leaves', async () => {
      const watch = subscribe(client(A), LIST)
      await until(() => watch.results.length === 1, 'the first result')
      assert.ok(env.server.subscriptionListeners('tasks') > 0)
      watch.stop()
      await until(() => env.server.subscriptionListeners('tasks') === 0, 'no listener')
      await until(() => env.server.subscriptionListeners('comments') === 0, 'no comment listener')
    })
  },
  liveApp
)

forEachDatabase(
  'Live queries for Feathers clients spend subscriptions, never rows',
  (env) => {
    it('a watch takes one of the caller’s subscriptions; its new results take no rows', async () => {
      const socket = io(env.server.baseUrl, { extraHeaders: A, transports: ['websocket'] })
      try {
        const client = feathers().configure(socketioClient(socket))
        const heard: any[] = []
        client.service('live-queries').on('result', (event: any) => heard.push(event))
        await client.service('live-queries').create({ path: 'tasks', query: { done: false } })
        // Each write brings a new result of one row or more: past the rows budget if it counted them.
        for (let index = 0; index < 4; index++) {
          await client.service('tasks').create({ title: `x${index}`, team: 'a', points: 1, done: false })
          await pollUntil(() => heard.length === index + 1, 'the new result', { ms: 5000 })
        }
        assert.equal(heard.at(-1).result.data.length, 5)
        await client.service('live-queries').create({ path: 'tasks', query: { done: true } })
        await assert.rejects(client.service('live-queries').create({ path: 'tasks' }), {
          name: 'TooManyRequests'
        })
      } finally {
        socket.close()
      }
    })
  },
  (databaseUrl) =>
    liveApp(databaseUrl, { budgets: { window: '1h', subscriptions: 2, rows: 3, key: () => 'everyone' } })
)

forEachDatabase(
  'Live queries of a Feathers client whose authentication ends',
  (env) => {
    it('stops the watches of a connection that logs out', async () => {
      const token = await accessToken(env.server, 'ann')
      const socket = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false
      })
      try {
        const client = feathers().configure(socketioClient(socket))
        await client.service('authentication').create({ strategy: 'jwt', accessToken: token })
        const heard: any[] = []
        client.service('live-queries').on('result', (event: any) => heard.push(event))
        const started: any = await client.service('live-queries').create({ path: 'todo-items' })
        assert.deepEqual(started.result.data, [])
        const annsWrite = (title: string) =>
          env.server.http('POST', '/todo-items', { title }, { Authorization: `Bearer ${token}` })
        assert.equal((await annsWrite('before')).status, 201)
        await pollUntil(() => heard.length === 1, 'the result while signed in', { ms: 5000 })
        // What the client's own find would send: no hidden field, its resolveExternal's fields.
        const [record] = heard[0].result.data
        assert.equal(record.title, 'before')
        assert.equal(record.mine, true)
        for (const hidden of HIDDEN_FIELDS) assert.equal(record[hidden], undefined, hidden)
        await client.service('authentication').remove(null)
        // The watch ends with a last event saying why.
        await pollUntil(() => heard.length === 2, 'the end of the watch', { ms: 5000 })
        assert.equal(heard[1].id, started.id)
        assert.equal(heard[1].error.name, 'NotAuthenticated')
        assert.equal(heard[1].result, undefined)
        assert.equal((await annsWrite('after')).status, 201)
        await new Promise((resolve) => setTimeout(resolve, 300))
        // Ann's records go no more to a connection no one is signed in on.
        assert.equal(heard.length, 2)
        assert.equal(env.server.subscriptionListeners('todo-items'), 0)
      } finally {
        socket.close()
      }
    })

    it('ends the watches of a connection on which another user signs in, and keeps those of the same user', async () => {
      const [ann, bob] = [await accessToken(env.server, 'ann'), await accessToken(env.server, 'bob')]
      const socket = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false
      })
      try {
        const client = feathers().configure(socketioClient(socket))
        await client.service('authentication').create({ strategy: 'jwt', accessToken: ann })
        const heard: any[] = []
        client.service('live-queries').on('result', (event: any) => heard.push(event))
        await client.service('live-queries').create({ path: 'todo-items' })
        // Ann again (a token refreshed): the watch goes on.
        await client.service('authentication').create({ strategy: 'jwt', accessToken: ann })
        await new Promise((resolve) => setTimeout(resolve, 100))
        assert.deepEqual(heard, [])
        await client.service('authentication').create({ strategy: 'jwt', accessToken: bob })
        await pollUntil(() => heard.length === 1, 'the end of ann’s watch', { ms: 5000 })
        assert.equal((heard[0] as any).error.name, 'NotAuthenticated')
        await pollUntil(() => env.server.subscriptionListeners('todo-items') === 0, 'no listener', {
          ms: 5000
        })
      } finally {
        socket.close()
      }
    })
  },
  createFeathersApp()
)

forEachDatabase(
  'Live queries past the process’s limit of questions',
  (env) => {
    it('refuses a new question with TOO_MANY_LIVE_QUERIES, and takes more subscribers of a kept one', async () => {
      const clients: Client[] = []
      const client = () => {
        const made = wsClient(env.server, A)
        clients.push(made)
        return made
      }
      try {
        const first = subscribe(client(), LIST)
        const same = subscribe(client(), LIST)
        await pollUntil(() => first.results.length === 1 && same.results.length === 1, 'the kept question', {
          ms: 5000
        })
        const other = subscribe(client(), 'subscription { tasks { totalCount } }')
        await pollUntil(() => other.errors.length === 1, 'the refusal', { ms: 5000 })
        assert.equal(other.errors[0].extensions.code, 'TOO_MANY_LIVE_QUERIES')
        assert.deepEqual(other.results, [])
      } finally {
        await Promise.all(clients.map((made) => made.dispose()))
      }
    })
  },
  (databaseUrl) => liveApp(databaseUrl, { live: { coalesceMs: 20, maxQuestions: 1 } })
)
