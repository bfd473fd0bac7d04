import assert from 'node:assert/strict'
import { feathers, type HookContext } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import socketioClient from '@feathersjs/socketio-client'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { io } from 'socket.io-client'
import { defineResource, FilterableField, IDField, QUERY_SYNTAX_HEADER, type Filter } from '../src'
import { knexConfig } from '../example/database'
import { codes, graphql } from './support/graphql'
import { pluginApp } from './support/plugin-app'
import { forEachDatabase } from './support/server'

const schema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  title: FilterableField(Type.String()),
  owner: FilterableField(Type.String()),
  version: FilterableField(Type.Integer({ readOnly: true }))
})

/** Callers see the documents of the `x-owner` they name; internal calls see all. */
const byOwner = (context: HookContext): Filter | undefined => {
  const owner = context.params.headers?.['x-owner']
  return typeof owner === 'string' ? { owner: { eq: owner } } : undefined
}

/**
 * Two writes with `x-meet` in their headers wait for each other before writing (or 3 s), so that both have
 * read the same version when their UPDATEs race.
 */
function meetingPoint() {
  let arrived = 0
  let release: () => void = () => {}
  const met = new Promise<void>((resolve) => (release = resolve))
  return async (context: HookContext) => {
    if (!context.params.headers?.['x-meet']) return
    if (++arrived === 2) release()
    await Promise.race([met, new Promise((resolve) => setTimeout(resolve, 3000))])
  }
}

async function concurrencyApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  for (const table of ['documents', 'notes']) {
    await db.schema.createTable(table, (columns) => {
      columns.increments('id')
      columns.string('title').notNullable()
      columns.string('owner').notNullable()
      columns.integer('version').notNullable()
    })
  }
  const documents = defineResource({
    name: 'Document',
    schema,
    authorize: byOwner,
    multi: true,
    concurrency: { version: 'version' }
  })
  // Versions required: a client's change without one is a 428.
  const notes = defineResource({
    name: 'Note',
    schema,
    concurrency: { version: 'version', required: true }
  })
  await db.schema.createTable('memos', (columns) => {
    columns.increments('id')
    columns.string('title').notNullable()
  })
  const memos = defineResource({
    name: 'Memo',
    schema: Type.Object({
      id: IDField(Type.Integer({ readOnly: true })),
      title: FilterableField(Type.String())
    })
  })
  const made = pluginApp(db, [documents, notes, memos], { transports: true })
  made.app.service('documents').hooks({ before: { patch: [meetingPoint()], remove: [meetingPoint()] } })
  return made
}

const ANN = { 'x-owner': 'ann' }
const FEATHERS = { [QUERY_SYNTAX_HEADER]: 'feathers' }

forEachDatabase(
  'Optimistic concurrency: record versions, ETag and If-Match',
  (env) => {
    const http = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      env.server.http(method, path, body, { ...ANN, ...headers })
    const create = async (title: string, owner = 'ann') =>
      (await env.server.app.service('documents').create({ title, owner })) as { id: number; version: number }

    it('creates at version 1 and adds 1 per change; single-record answers carry the version as ETag', async () => {
      const created = await http('POST', '/documents', { title: 'a', owner: 'ann' })
      assert.equal(created.status, 201)
      assert.equal(created.body.version, 1)
      assert.equal(created.headers.get('etag'), '"1"')
      const id = created.body.id
      const read = await http('GET', `/documents/${id}`)
      assert.equal(read.headers.get('etag'), '"1"')
      const patched = await http('PATCH', `/documents/${id}`, { title: 'b' })
      assert.deepEqual([patched.status, patched.body.version, patched.headers.get('etag')], [200, 2, '"2"'])
      const put = await http('PUT', `/documents/${id}`, { title: 'c', owner: 'ann' })
      assert.deepEqual([put.status, put.body.version, put.headers.get('etag')], [200, 3, '"3"'])
      // Clients never write it: the schema says readOnly.
      const written = await http('PATCH', `/documents/${id}`, { version: 1 })
      assert.equal(written.status, 400)
      assert.equal((await http('GET', `/documents/${id}`)).body.version, 3)
    })

    it('If-Match: the current version or * goes through; a stale, weak or foreign tag is a 412 and changes nothing', async () => {
      const { id } = await create('doc')
      await env.server.app.service('documents').patch(id, { title: 'v2' })
      for (const tag of ['"1"', 'W/"2"', '"nope"', '"1", "3"']) {
        const refused = await http('PATCH', `/documents/${id}`, { title: 'lost' }, { 'if-match': tag })
        assert.equal(refused.status, 412, tag)
        assert.equal(refused.body.name, 'PreconditionFailed')
        const removed = await http('DELETE', `/documents/${id}`, undefined, { 'if-match': tag })
        assert.equal(removed.status, 412, tag)
      }
      const stored = await env.server.app.service('documents').get(id)
      assert.deepEqual([stored.title, stored.version], ['v2', 2])
      const current = await http('PATCH', `/documents/${id}`, { title: 'v3' }, { 'if-match': '"1", "2"' })
      assert.deepEqual([current.status, current.body.version], [200, 3])
      const any = await http('PUT', `/documents/${id}`, { title: 'v4', owner: 'ann' }, { 'if-match': '*' })
      assert.deepEqual([any.status, any.body.version], [200, 4])
      const gone = await http('DELETE', `/documents/${id}`, undefined, { 'if-match': '"4"' })
      assert.equal(gone.status, 200)
      assert.equal((await http('GET', `/documents/${id}`)).status, 404)
    })

    it('a record the caller may not read is a 404 whatever the If-Match: no version leaks by difference', async () => {
      const { id } = await create('bob-only', 'bob')
      for (const tag of ['"1"', '"2"', '*']) {
        const patched = await http('PATCH', `/documents/${id}`, { title: 'x' }, { 'if-match': tag })
        assert.equal(patched.status, 404, tag)
        const removed = await http('DELETE', `/documents/${id}`, undefined, { 'if-match': tag })
        assert.equal(removed.status, 404, tag)
      }
      assert.equal(
        (await http('PATCH', '/documents/987654', { title: 'x' }, { 'if-match': '"1"' })).status,
        404
      )
    })

    it('If-None-Match on a versioned record: 304 while it is the version the client holds', async () => {
      const { id } = await create('cached')
      const first = await http('GET', `/documents/${id}`)
      const tag = first.headers.get('etag')!
      const again = await http('GET', `/documents/${id}`, undefined, { 'if-none-match': tag })
      assert.equal(again.status, 304)
      await env.server.app.service('documents').patch(id, { title: 'changed' })
      const changed = await http('GET', `/documents/${id}`, undefined, { 'if-none-match': tag })
      assert.deepEqual(
        [changed.status, changed.body.title, changed.headers.get('etag')],
        [200, 'changed', '"2"']
      )
    })

    it('two writers holding the same version: exactly one wins, the other gets a 412 and nothing of it is stored', async () => {
      const { id } = await create('race')
      const headers = { 'if-match': '"1"', 'x-meet': '1' }
      const responses = await Promise.all(
        ['first', 'second'].map((title) => http('PATCH', `/documents/${id}`, { title }, headers))
      )
      assert.deepEqual(responses.map((response) => response.status).sort(), [200, 412])
      const winner = responses.find((response) => response.status === 200)!.body.title
      const stored = await env.server.app.service('documents').get(id)
      assert.deepEqual([stored.title, stored.version], [winner, 2])
      // Removing: the second finds the record gone (404; 412 where its snapshot still shows the version it held).
      const removed = await Promise.all(
        [1, 2].map(() => http('DELETE', `/documents/${id}`, undefined, { 'if-match': '"2"', 'x-meet': '1' }))
      )
      const [won, lost] = removed.map((response) => response.status).sort()
      assert.equal(won, 200)
      assert.ok(lost === 404 || lost === 412, String(lost))
      assert.equal((await http('GET', `/documents/${id}`)).status, 404)
    })

    it('required versions: a client change without If-Match is a 428; internal calls and creates need none', async () => {
      const note = await env.server.app.service('notes').create({ title: 'n', owner: 'ann' })
      const missing = await env.server.http('PATCH', `/notes/${note.id}`, { title: 'x' })
      assert.deepEqual([missing.status, missing.body.name], [428, 'PreconditionRequired'])
      assert.equal((await env.server.http('DELETE', `/notes/${note.id}`)).status, 428)
      const given = await env.server.http('PATCH', `/notes/${note.id}`, { title: 'x' }, { 'if-match': '"1"' })
      assert.equal(given.status, 200)
      const patched = await env.server.app.service('notes').patch(note.id as number, { title: 'y' })
      assert.equal((patched as any).version, 3)
    })

    it('If-Match is refused on several records, and on a resource without versions only * applies', async () => {
      const many = await (env.server.app.service('documents') as any)
        .patch(null, { title: 'all' }, { ifMatch: '"1"', query: { owner: 'ann' } })
        .catch((error: any) => error)
      assert.equal(many.code, 400)
      const feathersGet = await env.server.http('GET', '/documents?$ifMatch=1', undefined, {
        ...ANN,
        ...FEATHERS
      })
      assert.equal(feathersGet.status, 400)
      assert.match(JSON.stringify(feathersGet.body), /\$ifMatch/)
    })

    it('GraphQL: version on updateOne and deleteOne, PRECONDITION_FAILED when stale', async () => {
      const { id } = await create('graphql')
      const update = (version: number) =>
        graphql(
          env.server,
          `mutation { updateOneDocument(input: { id: ${id}, update: { title: "v${version}" }, version: ${version} }) { id title version } }`,
          undefined,
          ANN
        )
      const stale = await update(7)
      assert.deepEqual(codes(stale), ['PRECONDITION_FAILED'])
      const fresh = await update(1)
      assert.deepEqual(fresh.data.updateOneDocument, { id: String(id), title: 'v1', version: 2 })
      const deleteStale = await graphql(
        env.server,
        `mutation { deleteOneDocument(input: { id: ${id}, version: 1 }) { title } }`,
        undefined,
        ANN
      )
      assert.deepEqual(codes(deleteStale), ['PRECONDITION_FAILED'])
      const note = await env.server.app.service('notes').create({ title: 'n', owner: 'ann' })
      const required = await graphql(
        env.server,
        `mutation { updateOneNote(input: { id: ${note.id}, update: { title: "x" } }) { id } }`
      )
      assert.deepEqual(codes(required), ['PRECONDITION_REQUIRED'])
    })

    it('Feathers clients: If-Match through the REST client, $ifMatch through socket.io; events carry the version', async () => {
      const { id } = await create('clients')
      const events: any[] = []
      const listener = (record: any) => events.push(record)
      env.server.app.service('documents').on('patched', listener)
      const restApp = feathers()
      restApp.configure(restClient(env.server.baseUrl).fetch(fetch, { headers: { ...FEATHERS, ...ANN } }))
      const connection = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false
      })
      try {
        const viaRest = restApp.service('documents')
        const stale = await viaRest
          .patch(id, { title: 'r' }, { headers: { 'if-match': '"5"' } })
          .catch((error: any) => error)
        assert.equal(stale.code, 412)
        const patched = await viaRest.patch(id, { title: 'r' }, { headers: { 'if-match': '"1"' } })
        assert.equal(patched.version, 2)
        const socketApp = feathers()
        socketApp.configure(socketioClient(connection))
        const viaSocket = socketApp.service('documents')
        const socketStale = await viaSocket
          .patch(id, { title: 's' }, { query: { $ifMatch: 1 } })
          .catch((error: any) => error)
        assert.equal(socketStale.code, 412)
        const socketPatched = await viaSocket.patch(id, { title: 's' }, { query: { $ifMatch: '"2"' } })
        assert.equal(socketPatched.version, 3)
        assert.deepEqual(
          events.filter((record) => record.id === id).map((record) => record.version),
          [2, 3]
        )
      } finally {
        connection.close()
        env.server.app.service('documents').off('patched', listener)
      }
    })

    it('a resource without versions: If-Match * goes through, any tag is a 412 (none can match)', async () => {
      const memo = await env.server.app.service('memos').create({ title: 'm' })
      const tagged = await env.server.http(
        'PATCH',
        `/memos/${memo.id}`,
        { title: 'x' },
        { 'if-match': '"1"' }
      )
      assert.deepEqual([tagged.status, tagged.body.name], [412, 'PreconditionFailed'])
      const any = await env.server.http('PATCH', `/memos/${memo.id}`, { title: 'y' }, { 'if-match': '*' })
      assert.deepEqual([any.status, any.body.title], [200, 'y'])
      assert.equal(any.headers.get('etag')?.startsWith('"'), undefined)
    })
  },
  concurrencyApp
)
