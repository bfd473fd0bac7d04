import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex from 'knex'
import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'
import { feathersQuery } from '../src'
import { forEachDatabase, startServer, type TestServer } from './support/server'
import { databaseLabel, databaseNames } from './support/databases'
import { pluginApp } from './support/plugin-app'
import { clearTables, seedTodoItems } from './support/seed'
import { graphqlWsClient } from './support/graphql-ws'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { exampleResources } from '../example/resources'
import type { TrustedDocumentsOptions } from '../src'

const TITLES =
  'query Titles { todoItems(sorting: [{ field: id, direction: ASC }]) { edges { node { title } } } }'
const RENAME =
  'mutation Rename($id: ID!, $title: String!) { updateOneTodoItem(input: { id: $id, update: { title: $title } }) { title } }'
const UNREGISTERED = '{ todoItems { totalCount } }'
const DOCUMENTS = { titles: TITLES, rename: RENAME }

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const persisted = (text: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(text) } })
const codes = (body: { errors?: Array<{ extensions: { code: string } }> }) =>
  (body.errors ?? []).map((error) => error.extensions.code)
const titles = (body: any) => body.data.todoItems.edges.map((edge: any) => edge.node.title)

function trustedApp(trustedDocuments: TrustedDocumentsOptions) {
  return async (databaseUrl: string) => {
    const db = knex(knexConfig(databaseUrl))
    await migrateLatest(db)
    return pluginApp(db, exampleResources, { plugin: { graphql: { trustedDocuments } } })
  }
}

const post = (server: TestServer, body: unknown) => server.http('POST', '/graphql', body)
const get = (server: TestServer, params: Record<string, unknown>) => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params))
    search.set(key, typeof value === 'string' ? value : JSON.stringify(value))
  return server.http('GET', `/graphql?${search}`)
}

async function seed(server: TestServer) {
  await clearTables(server.db)
  await seedTodoItems(server.db, [{ title: 'alpha' }, { title: 'bravo' }])
}

forEachDatabase(
  'GraphQL trusted documents: any document runs, known ones by id too (allow-any)',
  (env) => {
    before(() => seed(env.server))

    it('runs a registered document by its documentId, over POST and over GET', async () => {
      const posted = await post(env.server, { documentId: 'titles' })
      assert.equal(posted.status, 200, posted.text)
      assert.deepEqual(titles(posted.body), ['alpha', 'bravo'])
      const got = await get(env.server, { documentId: 'titles' })
      assert.equal(got.status, 200, got.text)
      assert.deepEqual(titles(got.body), ['alpha', 'bravo'])
      const bySha = await post(env.server, { extensions: persisted(TITLES) })
      assert.deepEqual(titles(bySha.body), ['alpha', 'bravo'])
    })

    it('answers a GET by id with a tag, and the tag with a 304 that runs no SQL', async () => {
      const path = '/graphql?documentId=titles'
      const first = await fetch(env.server.baseUrl + path)
      await first.text()
      const etag = first.headers.get('etag')
      assert.match(etag ?? '', /^W\/"[\w-]+"$/)
      let again: Response | undefined
      const statements = await env.server.countStatements(async () => {
        again = await fetch(env.server.baseUrl + path, { headers: { 'if-none-match': etag! } })
        await again.text()
      })
      assert.equal(again!.status, 304)
      assert.equal(statements, 0)
    })

    it('refuses a mutation by id over GET, and runs it over POST', async () => {
      const [{ id }] = await env.server.db('todo_items').where({ title: 'alpha' }).select('id')
      const variables = { id: String(id), title: 'alpha' }
      const got = await get(env.server, { documentId: 'rename', variables })
      assert.equal(got.status, 405, got.text)
      assert.deepEqual(codes(got.body), ['METHOD_NOT_ALLOWED'])
      const posted = await post(env.server, { documentId: 'rename', variables })
      assert.deepEqual(posted.body, { data: { updateOneTodoItem: { title: 'alpha' } } })
    })

    it('refuses an unknown documentId, a documentId with a query, and a documentId not a string', async () => {
      const unknown = await get(env.server, { documentId: 'nope' })
      assert.equal(unknown.status, 400)
      assert.deepEqual(codes(unknown.body), ['PERSISTED_QUERY_NOT_FOUND'])
      const both = await post(env.server, { documentId: 'titles', query: TITLES })
      assert.equal(both.status, 400)
      assert.deepEqual(codes(both.body), ['BAD_REQUEST'])
      const number = await post(env.server, { documentId: 7 })
      assert.equal(number.status, 400)
      assert.deepEqual(codes(number.body), ['BAD_REQUEST'])
    })

    it('runs any document sent whole', async () => {
      const response = await post(env.server, { query: UNREGISTERED })
      assert.deepEqual(response.body, { data: { todoItems: { totalCount: 2 } } })
    })

    it("speaks Apollo's Automatic Persisted Queries: not found, registered with its document, then by hash", async () => {
      const query = '{ todoItems { edges { node { id } } } }'
      const unknown = await get(env.server, { extensions: persisted(query) })
      assert.equal(unknown.status, 200)
      assert.deepEqual(codes(unknown.body), ['PERSISTED_QUERY_NOT_FOUND'])
      const registered = await post(env.server, { query, extensions: persisted(query) })
      assert.equal(registered.status, 200, registered.text)
      assert.equal(registered.body.data.todoItems.edges.length, 2)
      const byHash = await get(env.server, { extensions: persisted(query) })
      assert.equal(byHash.status, 200, byHash.text)
      assert.deepEqual(byHash.body, registered.body)
      assert.match(byHash.headers.get('etag') ?? '', /^W\//)
    })

    it('refuses an Automatic Persisted Query whose hash is not that of its document', async () => {
      const response = await post(env.server, { query: UNREGISTERED, extensions: persisted(TITLES) })
      assert.equal(response.status, 400)
      assert.deepEqual(codes(response.body), ['PERSISTED_QUERY_HASH_MISMATCH'])
    })
  },
  trustedApp({ documents: DOCUMENTS })
)

let asked: string[] = []
const lookup = (id: string) => {
  asked.push(id)
  if (id === 'unreachable') throw new Error('connect ECONNREFUSED 10.0.0.5:6379')
  return Object.hasOwn(DOCUMENTS, id) ? DOCUMENTS[id as keyof typeof DOCUMENTS] : undefined
}

forEachDatabase(
  'GraphQL trusted documents: only registered documents run (enforce)',
  (env) => {
    before(() => seed(env.server))

    it('runs a document its function finds, asking once per id', async () => {
      asked = []
      for (let i = 0; i < 3; i++) {
        const response = await get(env.server, { documentId: 'titles' })
        assert.equal(response.status, 200, response.text)
        assert.deepEqual(titles(response.body), ['alpha', 'bravo'])
      }
      assert.deepEqual(asked, ['titles'])
    })

    it('answers a failing lookup with a 500 that keeps its message from the client', async () => {
      const response = await get(env.server, { documentId: 'unreachable' })
      assert.equal(response.status, 500)
      assert.deepEqual(codes(response.body), ['INTERNAL_SERVER_ERROR'])
      assert.doesNotMatch(response.text, /ECONNREFUSED/)
    })

    it('refuses a document it does not know, over HTTP and over WebSocket, and runs one it knows', async () => {
      const refused = await post(env.server, { query: UNREGISTERED })
      assert.equal(refused.status, 400)
      assert.deepEqual(codes(refused.body), ['PERSISTED_QUERY_REQUIRED'])
      // The function's documents are known once asked for by id.
      await get(env.server, { documentId: 'titles' })
      const known = await post(env.server, { query: TITLES })
      assert.deepEqual(titles(known.body), ['alpha', 'bravo'])
      const client = graphqlWsClient(env.server)
      try {
        const errors = await new Promise<any>((resolve) =>
          client.subscribe({ query: UNREGISTERED }, { next: resolve, error: resolve, complete: () => {} })
        )
        assert.match(JSON.stringify(errors), /PERSISTED_QUERY_REQUIRED/)
      } finally {
        await client.dispose()
      }
    })

    it('lets no Automatic Persisted Query register a document', async () => {
      const registering = await post(env.server, { query: UNREGISTERED, extensions: persisted(UNREGISTERED) })
      assert.equal(registering.status, 400)
      assert.deepEqual(codes(registering.body), ['PERSISTED_QUERY_REQUIRED'])
      const byHash = await post(env.server, { extensions: persisted(UNREGISTERED) })
      assert.deepEqual(codes(byHash.body), ['PERSISTED_QUERY_NOT_FOUND'])
      const registered = await post(env.server, { extensions: persisted(TITLES) })
      assert.deepEqual(titles(registered.body), ['alpha', 'bravo'])
    })
  },
  trustedApp({ documents: lookup, mode: 'enforce' })
)

for (const database of databaseNames) {
  describe(`GraphQL trusted documents: production enforces a manifest file [${databaseLabel(database)}]`, () => {
    let server: TestServer
    before(async function () {
      this.timeout(60000)
      const directory = mkdtempSync(join(tmpdir(), 'trusted-'))
      const manifest = {
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: 'apollo-id', name: 'Titles', type: 'query', body: TITLES }]
      }
      writeFileSync(join(directory, 'manifest.json'), JSON.stringify(manifest))
      // The mode is decided when the server starts.
      const environment = process.env.NODE_ENV
      process.env.NODE_ENV = 'production'
      try {
        server = await startServer(database, trustedApp({ documents: join(directory, 'manifest.json') }))
      } finally {
        process.env.NODE_ENV = environment
      }
      await seed(server)
    })
    after(() => server?.close())

    it('reads an Apollo manifest, and refuses any other document under NODE_ENV=production', async () => {
      const byId = await get(server, { documentId: 'apollo-id' })
      assert.deepEqual(titles(byId.body), ['alpha', 'bravo'])
      const refused = await post(server, { query: UNREGISTERED })
      assert.deepEqual(codes(refused.body), ['PERSISTED_QUERY_REQUIRED'])
    })
  })
}

// Start-up only: registration never reaches the database, so one (SQLite in memory) shows it.
describe('GraphQL trusted documents: registration', () => {
  const start = async (
    documents: TrustedDocumentsOptions['documents'],
    { configured = false, mode }: { configured?: boolean; mode?: string } = {}
  ) => {
    const db = knex({
      client: 'better-sqlite3',
      connection: { filename: ':memory:' },
      useNullAsDefault: true
    })
    const trustedDocuments = { documents, ...(mode ? { mode } : {}) } as TrustedDocumentsOptions
    try {
      const { app } = configured
        ? inConfiguration(db, { checkSchema: false, graphql: { trustedDocuments } })
        : pluginApp(db, exampleResources, { plugin: { checkSchema: false, graphql: { trustedDocuments } } })
      await app.setup()
    } finally {
      await db.destroy()
    }
  }

  /** The plugin with its options in the application's configuration (key feathersQuery), as JSON. */
  const inConfiguration = (db: knex.Knex, configuration: unknown) => {
    const app = koa(feathers())
    app.set('feathersQuery', configuration)
    app.configure(feathersQuery({ Model: db, resources: exampleResources }))
    return { app }
  }

  it('refuses to start with a document that cannot run, naming it', async () => {
    await assert.rejects(start({ ok: TITLES, broken: '{ todoItems { nope } }' }), {
      name: 'ConfigurationError',
      message: /"broken" cannot run: Cannot query field "nope"/
    })
    await assert.rejects(start({ unparsable: '{ todoItems ' }), {
      message: /"unparsable" cannot run: Syntax/
    })
  })

  it('takes them from the configuration too, and refuses an unknown mode', async () => {
    await assert.rejects(start({ broken: '{ nope }' }, { configured: true }), {
      message: /"broken" cannot run/
    })
    await assert.rejects(start({ ok: TITLES }, { configured: true, mode: 'strict' }), {
      name: 'ConfigurationError',
      message: /mode/
    })
    await assert.rejects(start({ ok: TITLES }, { mode: 'strict' }), {
      name: 'ConfigurationError',
      message: /mode must be 'enforce' or 'allow-any'/
    })
  })

  it('reads a manifest file of documents by id, and refuses one it cannot read', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'trusted-'))
    writeFileSync(join(directory, 'good.json'), JSON.stringify({ [sha256(TITLES)]: TITLES }))
    await start(join(directory, 'good.json'))
    writeFileSync(join(directory, 'bad.json'), JSON.stringify({ [sha256(TITLES)]: '{ nope }' }))
    await assert.rejects(start(join(directory, 'bad.json')), { message: /cannot run/ })
    await assert.rejects(start(join(directory, 'missing.json')), { message: /cannot read .*missing\.json/ })
  })
})
