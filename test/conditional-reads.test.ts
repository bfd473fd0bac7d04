import assert from 'node:assert/strict'
import knex from 'knex'
import { get as httpGet } from 'node:http'
import { exampleApp, forEachDatabase, type TestServer } from './support/server'
import { clearTables, seedSubTasks, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'
import { accessToken, bearer, createAuthApp } from './support/auth-app'
import { pluginApp } from './support/plugin-app'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { exampleResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'
import { pollUntil } from './support/eventually'
import { createTestDatabase, databaseNames } from './support/databases'
import { reachable, REDIS, startInstances, type Instance } from './support/instances'

const GRAPHQL_READ = '{ todoItems { edges { node { id title subTasks { edges { node { title } } } } } } }'
const graphqlGet = (query: string) => `/graphql?query=${encodeURIComponent(query)}`

const titles = (body: { nodes: Array<{ title: string }> }) => body.nodes.map((node) => node.title)

/** A GET with its answer's tag and how many SQL statements it took; JSON parsed, anything else as text. */
async function read(server: TestServer, path: string, headers: Record<string, string> = {}) {
  let response: Response | undefined
  let text = ''
  const statements = await server.countStatements(async () => {
    response = await fetch(server.baseUrl + path, { headers })
    text = await response.text()
  })
  const json = /^application\/(graphql-response\+)?json/.test(response!.headers.get('content-type') ?? '')
  return {
    status: response!.status,
    headers: response!.headers,
    text,
    body: json ? JSON.parse(text) : text,
    etag: response!.headers.get('etag'),
    statements
  }
}

/** Reads `path`, then again with its tag: the second must be a 304 that ran no SQL. */
async function assertRevalidates(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const first = await read(server, path, headers)
  assert.equal(first.status, 200, `${path}: ${first.text}`)
  assert.match(first.etag ?? '', /^W\/"[\w-]+"$/, path)
  assert.equal(first.headers.get('cache-control'), 'private, no-cache', path)
  assert.match(first.headers.get('vary') ?? '', /Authorization/, path)
  const again = await read(server, path, { ...headers, 'if-none-match': first.etag! })
  assert.equal(again.status, 304, path)
  assert.equal(again.text, '', path)
  assert.equal(again.etag, first.etag, path)
  assert.equal(again.headers.get('cache-control'), 'private, no-cache', path)
  assert.equal(again.statements, 0, `${path}: a 304 runs no SQL`)
  return first
}

forEachDatabase('Conditional reads: ETag and 304 on every read route', (env) => {
  let id: number
  before(async () => {
    await clearTables(env.server.db)
    ;[id] = await seedTodoItems(env.server.db, [{ title: 'alpha' }, { title: 'bravo', completed: true }])
    await seedSubTasks(env.server.db, [{ todoItemId: id, title: 'first step' }])
  })

  it('tags each read and answers its tag with a 304 without SQL', async () => {
    for (const path of [
      '/todo-items',
      '/todo-items?completed=true&limit=1&offset=1',
      `/todo-items/${id}`,
      '/todo-items/aggregate?groupBy=completed&count=id',
      '/todo-items/export',
      '/sub-tasks',
      graphqlGet(GRAPHQL_READ)
    ]) {
      await assertRevalidates(env.server, path)
    }
    await assertRevalidates(env.server, '/todo-items/export', { accept: 'application/x-ndjson' })
  })

  it('gives each form of an answer its own tag: query string, Accept, headers hooks may read', async () => {
    const list = await read(env.server, '/todo-items')
    const tags = new Set([
      list.etag,
      (await read(env.server, '/todo-items?completed=true')).etag,
      (await read(env.server, '/todo-items/export')).etag,
      (await read(env.server, '/todo-items/export', { accept: 'application/x-ndjson' })).etag,
      (await read(env.server, '/todo-items', { 'x-tenant': 'other' })).etag
    ])
    assert.equal(tags.size, 5)
    const ndjson = await read(env.server, '/todo-items/export', {
      accept: 'application/x-ndjson',
      'if-none-match': (await read(env.server, '/todo-items/export')).etag!
    })
    assert.equal(ndjson.status, 200)
    assert.match(ndjson.headers.get('content-type') ?? '', /ndjson/)
  })

  it('answers HEAD with the tag of GET, and a 304 for it', async () => {
    const { etag } = await read(env.server, '/todo-items')
    const head = await fetch(`${env.server.baseUrl}/todo-items`, { method: 'HEAD' })
    assert.equal(head.headers.get('etag'), etag)
    const revalidated = await fetch(`${env.server.baseUrl}/todo-items`, {
      method: 'HEAD',
      headers: { 'if-none-match': etag! }
    })
    assert.equal(revalidated.status, 304)
  })

  it('matches a tag anywhere in an If-None-Match list, and not "*"', async () => {
    const { etag } = await read(env.server, '/todo-items')
    const listed = await read(env.server, '/todo-items', { 'if-none-match': `"other", ${etag}` })
    assert.equal(listed.status, 304)
    const star = await read(env.server, '/todo-items', { 'if-none-match': '*' })
    assert.equal(star.status, 200)
  })

  it('tags no error: a 404, a 400, GraphQL errors, a mutation over GET', async () => {
    for (const path of [
      '/todo-items/999999',
      '/todo-items?nope=1',
      graphqlGet('mutation { deleteOneTodoItem(input: { id: "1" }) { id } }')
    ]) {
      const response = await read(env.server, path, { accept: 'application/json' })
      assert.notEqual(response.status, 200, path)
      assert.equal(response.etag, null, path)
    }
    for (const query of ['{ todoItems { nope } }', '{ todoItem(id: "999999") { title } }']) {
      const response = await read(env.server, graphqlGet(query), { accept: 'application/json' })
      assert.ok(response.body.errors.length > 0, query)
      assert.equal(response.etag, null, query)
    }
  })
})

forEachDatabase('Conditional reads: writes change the tags', (env) => {
  let id: number
  beforeEach(async () => {
    await clearTables(env.server.db)
    ;[id] = await seedTodoItems(env.server.db, [{ title: 'alpha' }])
  })

  /** After `write`, the old tag of `path` gets a 200 with a new tag, and the new tag a 304. */
  async function assertWriteChangesTag(path: string, write: () => Promise<unknown>) {
    const before = await read(env.server, path)
    await write()
    const after = await read(env.server, path, { 'if-none-match': before.etag! })
    assert.equal(after.status, 200, path)
    assert.notEqual(after.etag, before.etag, path)
    assert.equal((await read(env.server, path, { 'if-none-match': after.etag! })).status, 304, path)
    return { before, after }
  }

  it('a REST create, a GraphQL mutation and an internal service call each change the tag', async () => {
    const { before, after } = await assertWriteChangesTag('/todo-items', () =>
      env.server.http('POST', '/todo-items', { title: 'by REST' })
    )
    assert.notDeepEqual(after.body.nodes, before.body.nodes)
    await assertWriteChangesTag('/todo-items', async () => {
      const created = await graphql(
        env.server,
        'mutation { createOneTodoItem(input: { todoItem: { title: "by GraphQL" } }) { id } }'
      )
      assert.equal(created.errors, undefined)
    })
    await assertWriteChangesTag(`/todo-items/${id}`, () =>
      env.server.app.service('todo-items').patch(id, { title: 'internal' })
    )
  })

  it('a write to a related resource changes the tag of a read that shows it', async () => {
    const create = () =>
      env.server.app.service('sub-tasks').create({ todoItemId: String(id), title: 'a step' })
    // The list's subTasksCount counts sub-tasks; the GraphQL document reads them through the relation.
    const list = await assertWriteChangesTag('/todo-items', create)
    assert.notEqual(list.after.body.nodes[0].subTasksCount, list.before.body.nodes[0].subTasksCount)
    const nested = await assertWriteChangesTag(graphqlGet(GRAPHQL_READ), create)
    assert.notDeepEqual(nested.after.body, nested.before.body)
  })

  it('a write that fails still leaves no 304 for what it may have changed', async () => {
    await assertWriteChangesTag('/todo-items', async () => {
      const refused = await env.server.http('PATCH', '/todo-items/999999', { title: 'x' })
      assert.equal(refused.status, 404)
    })
  })
})

forEachDatabase(
  'Conditional reads: callers',
  (env) => {
    let tokens: Record<string, string>
    before(async () => {
      tokens = {
        ann: await accessToken(env.server, 'ann'),
        bob: await accessToken(env.server, 'bob')
      }
      for (const user of ['ann', 'bob']) {
        const created = await env.server.http('POST', '/todo-items', { title: user }, bearer(tokens[user]))
        assert.equal(created.status, 201)
      }
    })

    it('never shares a tag between callers with different scopes', async () => {
      const ann = await assertRevalidates(env.server, '/todo-items', bearer(tokens.ann))
      const bob = await assertRevalidates(env.server, '/todo-items', bearer(tokens.bob))
      assert.notEqual(ann.etag, bob.etag)
      assert.notDeepEqual(titles(ann.body), titles(bob.body))
      const crossed = await read(env.server, '/todo-items', {
        ...bearer(tokens.bob),
        'if-none-match': ann.etag!
      })
      assert.equal(crossed.status, 200)
      assert.deepEqual(titles(crossed.body), titles(bob.body))
      const anonymous = await read(env.server, '/todo-items', { 'if-none-match': ann.etag! })
      assert.equal(anonymous.status, 401)
    })

    it('tags apart a header an application hook reads (x-hide-completed)', async () => {
      await env.server.http('POST', '/todo-items', { title: 'done', completed: true }, bearer(tokens.ann))
      const all = await read(env.server, '/todo-items', bearer(tokens.ann))
      const open = await read(env.server, '/todo-items', {
        ...bearer(tokens.ann),
        'x-hide-completed': 'yes',
        'if-none-match': all.etag!
      })
      assert.equal(open.status, 200)
      assert.ok(open.body.nodes.length < all.body.nodes.length)
      assert.match(open.headers.get('vary') ?? '', /x-hide-completed/)
    })

    it("changes every caller's tag on a write, also one the caller cannot see", async () => {
      const ann = await read(env.server, '/todo-items', bearer(tokens.ann))
      await env.server.http('POST', '/todo-items', { title: 'bob again' }, bearer(tokens.bob))
      const again = await read(env.server, '/todo-items', {
        ...bearer(tokens.ann),
        'if-none-match': ann.etag!
      })
      assert.equal(again.status, 200)
      const ids = (body: { nodes: Array<{ id: number }> }) => body.nodes.map((node) => node.id)
      assert.deepEqual(ids(again.body), ids(ann.body))
    })

    it('answers an expired token with 401, not with a 304', async function () {
      this.timeout(20000)
      const token = await accessToken(env.server, 'ann', { expiresIn: '1s' })
      const first = await read(env.server, '/todo-items', bearer(token))
      assert.equal(first.status, 200)
      await pollUntil(
        async () =>
          (await read(env.server, '/todo-items', { ...bearer(token), 'if-none-match': first.etag! }))
            .status === 401,
        'the expired token refused'
      )
    })
  },
  createAuthApp
)

/** The example resources with caching switched per resource and for the application. */
async function configuredApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  const resources = exampleResources.map((resource) =>
    resource.name === 'SubTask' ? { ...resource, caching: { cacheControl: 'private, max-age=5' } } : resource
  )
  return pluginApp(db, resources, {
    plugin: { caching: { cacheControl: 'no-cache', ignoreHeaders: ['X-Trace'] } }
  })
}

forEachDatabase(
  'Conditional reads: options',
  (env) => {
    it("takes the application's Cache-Control, a resource's own, and headers to ignore", async () => {
      const items = await read(env.server, '/todo-items', { 'x-trace': 'one' })
      assert.equal(items.headers.get('cache-control'), 'no-cache')
      assert.equal((await read(env.server, '/sub-tasks')).headers.get('cache-control'), 'private, max-age=5')
      const traced = await read(env.server, '/todo-items', { 'x-trace': 'two', 'if-none-match': items.etag! })
      assert.equal(traced.status, 304)
    })
  },
  configuredApp
)

async function uncachedApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  const resources = exampleResources.map((resource) =>
    resource.name === todoItemResource.name ? { ...resource, caching: { enabled: false } } : resource
  )
  return pluginApp(db, resources)
}

forEachDatabase(
  'Conditional reads: a resource without caching',
  (env) => {
    it('tags none of its REST reads, and no GraphQL GET', async () => {
      for (const path of ['/todo-items', '/todo-items/export', graphqlGet(GRAPHQL_READ)]) {
        const response = await read(env.server, path)
        assert.equal(response.status, 200)
        assert.equal(response.etag, null, path)
        assert.equal(response.headers.get('cache-control'), null, path)
      }
      await assertRevalidates(env.server, '/sub-tasks')
    })
  },
  uncachedApp
)

/** A GET on a connection of its own, which a server's restart cannot leave half closed. */
function getWithoutKeepAlive(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; etag?: string }>((resolve, reject) => {
    const request = httpGet(url, { agent: false, headers }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode!, etag: response.headers.etag }))
    })
    request.on('error', reject)
  })
}

/** Serves a fresh example app on `databaseUrl` at `port` (0: any); answers its port and a way to stop it. */
async function serveExample(databaseUrl: string, port: number) {
  const { app, db } = await exampleApp(databaseUrl)
  const server = await app.listen(port)
  const address = server.address()
  return {
    port: typeof address === 'object' && address ? address.port : port,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections?.()
      await db.destroy()
    }
  }
}

for (const name of databaseNames) {
  describe(`Conditional reads: a restart [${name}]`, function () {
    it('never confirms a tag the server before the restart gave, though nothing was written', async () => {
      const database = await createTestDatabase(name)
      try {
        const before = await serveExample(database.url, 0)
        const path = `http://127.0.0.1:${before.port}/todo-items`
        const { etag } = await getWithoutKeepAlive(path)
        assert.equal((await getWithoutKeepAlive(path, { 'if-none-match': etag! })).status, 304)
        await before.stop()
        // The same port, so that every header of the request is the same as before.
        const after = await serveExample(database.url, before.port)
        try {
          assert.equal((await getWithoutKeepAlive(path, { 'if-none-match': etag! })).status, 200)
        } finally {
          await after.stop()
        }
      } finally {
        await database.drop()
      }
    })
  })
}

/**
 * Two processes of the example app on one database, their events shared by feathers-sync through Redis: a
 * write on one ends the other's 304s once its event has arrived there.
 */
for (const name of databaseNames) {
  describe(`Conditional reads: two instances through feathers-sync [${name}]`, function () {
    const instances: Instance[] = []
    let database: { url: string; drop(): Promise<void> } | undefined

    before(async function () {
      this.timeout(120000)
      if (!(await reachable(REDIS))) {
        console.log(`    (skipped: Redis is not reachable on ${REDIS.host}:${REDIS.port})`)
        this.skip()
      }
      const started = await startInstances(name, 2)
      database = started.database
      instances.push(...started.instances)
    })

    after(async () => {
      for (const instance of instances.splice(0)) instance.stop()
      await database?.drop()
    })

    it("a write on one instance ends the other's 304 once its event arrived", async function () {
      this.timeout(30000)
      const [writer, reader] = instances
      const tagged = await reader.http('GET', '/tags')
      assert.equal(tagged.status, 200)
      const etag = tagged.headers.get('etag')!
      const unchanged = await reader.http('GET', '/tags', undefined, { 'if-none-match': etag })
      assert.equal(unchanged.status, 304)
      const created = await writer.http('POST', '/tags', { name: 'from the writer' })
      assert.equal(created.status, 201, created.text)
      const changed = await pollUntil(async () => {
        const response = await reader.http('GET', '/tags', undefined, { 'if-none-match': etag })
        return response.status === 200 ? response : undefined
      }, 'the write heard on the reader')
      assert.deepEqual(
        changed!.body.nodes.map((tag: { name: string }) => tag.name),
        ['from the writer']
      )
    })

    it("never answers another instance's tag with a 304: each process tags with its own epoch", async () => {
      const [first, second] = instances
      const tagged = await first.http('GET', '/tags')
      const elsewhere = await second.http('GET', '/tags', undefined, {
        'if-none-match': tagged.headers.get('etag')!
      })
      assert.equal(elsewhere.status, 200)
      assert.notEqual(elsewhere.headers.get('etag'), tagged.headers.get('etag'))
    })
  })
}
