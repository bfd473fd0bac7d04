import assert from 'node:assert/strict'
import { feathers, type Application } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import socketioClient from '@feathersjs/socketio-client'
import { io } from 'socket.io-client'
import { QUERY_SYNTAX_HEADER } from '../src'
import { codes, graphql } from './support/graphql'
import { forEachDatabase } from './support/server'
import { versionedApp } from './support/versioned-app'

const ANN = { 'x-owner': 'ann' }
const FEATHERS = { [QUERY_SYNTAX_HEADER]: 'feathers' }
const failure = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: { code: number; message: string }) => error
  )

/** Versions through every surface and every form of write: reads, several records, replace, soft delete. */
forEachDatabase(
  'Optimistic concurrency: reads, several records, replace and soft delete on every surface',
  (env) => {
    const http = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      env.server.http(method, path, body, { ...ANN, ...headers })
    const create = async (service: string, owner = 'ann') =>
      (await env.server.app.service(service).create({ title: 't', owner })) as { id: number }
    /** A Feathers REST client and a socket.io client as `ann`, closed after `work` (before the server stops). */
    async function withClients(work: (rest: Application, socket: Application) => Promise<void>) {
      const rest = feathers()
      rest.configure(restClient(env.server.baseUrl).fetch(fetch, { headers: { ...FEATHERS, ...ANN } }))
      const connection = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false
      })
      const socket = feathers()
      socket.configure(socketioClient(connection))
      try {
        await work(rest, socket)
      } finally {
        connection.close()
      }
    }

    it('If-None-Match on a versioned record the caller cannot read: 404 on GET and HEAD, never 304', async () => {
      const { id } = await create('pages', 'bob')
      for (const method of ['GET', 'HEAD']) {
        for (const tag of ['"1"', 'W/"1"', '"0", "1", "2"']) {
          const response = await fetch(`${env.server.baseUrl}/pages/${id}`, {
            method,
            headers: { ...ANN, 'if-none-match': tag }
          })
          assert.deepEqual([response.status, response.headers.get('etag')], [404, null], `${method} ${tag}`)
        }
      }
    })

    it('$ifMatch on a find or a create is a 400 from every client and from code', async () => {
      const { id } = await create('cards')
      const query = { $ifMatch: 1 }
      await withClients(async (restApp, socketApp) => {
        const [rest, socket] = [restApp.service('cards'), socketApp.service('cards')]
        for (const [name, call] of Object.entries({
          'REST find': rest.find({ query }),
          'socket find': socket.find({ query }),
          'socket create': socket.create({ title: 'n', owner: 'ann' }, { query })
        })) {
          const error = await failure(call as Promise<unknown>)
          assert.equal(error?.code, 400, name)
          assert.match(error.message, /\$ifMatch/, name)
        }
        void id
      })
    })

    it('a get names the version it expects as a write does: the record in that version, else a 412', async () => {
      const { id } = await create('cards')
      // Version 2, the title as the other tests expect it.
      await env.server.app.service('cards').patch(id, { title: 't' })
      await withClients(async (restApp, socketApp) => {
        const [rest, socket] = [restApp.service('cards'), socketApp.service('cards')]
        const internal = env.server.app.service('cards')
        for (const [name, service] of Object.entries({ rest, socket, internal })) {
          const current = (await service.get(id, { query: { $ifMatch: 2 } })) as { version: number }
          assert.equal(current.version, 2, name)
          assert.equal((await failure(service.get(id, { query: { $ifMatch: 1 } })))?.code, 412, name)
        }
        const header = await env.server.http('GET', `/cards/${id}`, undefined, { ...ANN, 'if-match': '"1"' })
        assert.equal(header.status, 412)
        const matching = await env.server.http('GET', `/cards/${id}`, undefined, {
          ...ANN,
          'if-match': '"2"'
        })
        assert.deepEqual([matching.status, matching.body.version], [200, 2])
      })
    })

    it('If-Match on patch or remove of several records is a 400, * too, and changes nothing', async () => {
      await create('cards')
      const multi = { query: { owner: 'ann' } }
      await withClients(async (restApp, socketApp) => {
        const [rest, socket] = [restApp.service('cards'), socketApp.service('cards')]
        for (const [name, call] of Object.entries({
          'REST patch': rest.patch(null, { title: 'm' }, { ...multi, headers: { 'if-match': '"1"' } }),
          'REST patch *': rest.patch(null, { title: 'm' }, { ...multi, headers: { 'if-match': '*' } }),
          'REST remove': rest.remove(null, { ...multi, headers: { 'if-match': '"1"' } }),
          'socket patch': socket.patch(null, { title: 'm' }, { query: { owner: 'ann', $ifMatch: 1 } }),
          'socket remove': socket.remove(null, { query: { owner: 'ann', $ifMatch: 1 } })
        })) {
          assert.equal((await failure(call as Promise<unknown>))?.code, 400, name)
        }
      })
      const stored = (await env.server.app.service('cards').find({ query: { owner: 'ann' } })) as any
      assert.ok(stored.data.every((card: { title: string }) => card.title === 't'))
    })

    it("update.replace: PUT and the clients' update replace the current version, a stale one is a 412", async () => {
      const { id } = await create('pages')
      const replaced = await http('PUT', `/pages/${id}`, { owner: 'ann' }, { 'if-match': '"1"' })
      assert.deepEqual([replaced.status, replaced.body.title, replaced.body.version], [200, null, 2])
      assert.equal(replaced.headers.get('etag'), '"2"')
      const stale = await http('PUT', `/pages/${id}`, { title: 'lost', owner: 'ann' }, { 'if-match': '"1"' })
      assert.equal(stale.status, 412)
      await withClients(async (restApp, socketApp) => {
        const data = { title: 'x', owner: 'ann' }
        const [rest, socket] = [restApp.service('pages'), socketApp.service('pages')]
        assert.equal((await failure(rest.update(id, data, { headers: { 'if-match': '"1"' } })))?.code, 412)
        assert.equal((await failure(socket.update(id, data, { query: { $ifMatch: 1 } })))?.code, 412)
        assert.equal((await socket.update(id, data, { query: { $ifMatch: 2 } })).version, 3)
      })
    })

    it('soft delete: a stale If-Match is a 412 and keeps the record, the current one deletes it, then 404', async () => {
      const { id } = await create('drafts')
      assert.equal((await http('DELETE', `/drafts/${id}`, undefined, { 'if-match': '"7"' })).status, 412)
      assert.equal((await http('GET', `/drafts/${id}`)).status, 200)
      assert.equal((await http('DELETE', `/drafts/${id}`, undefined, { 'if-match': '"1"' })).status, 200)
      for (const [method, headers] of [
        ['DELETE', { 'if-match': '"1"' }],
        ['PATCH', { 'if-match': '"1"' }],
        ['GET', { 'if-none-match': '"1"' }]
      ] as const) {
        assert.equal(
          (await http(method, `/drafts/${id}`, method === 'PATCH' ? { title: 'z' } : undefined, headers))
            .status,
          404,
          method
        )
      }
    })

    it('GraphQL POST: version as a variable; a stale one is PRECONDITION_FAILED; If-Match headers are not read', async () => {
      const { id } = await create('cards')
      const mutation = `mutation Change($version: Int) { updateOneCard(input: { id: ${id}, update: { title: "g" }, version: $version }) { version } }`
      const stale = await graphql(env.server, mutation, { version: 5 }, ANN)
      assert.deepEqual(codes(stale), ['PRECONDITION_FAILED'])
      const fresh = await graphql(env.server, mutation, { version: 1 }, ANN)
      assert.equal(fresh.data.updateOneCard.version, 2)
      // A GraphQL request's headers belong to its whole document, not to one of its mutations.
      const headed = await graphql(env.server, mutation, {}, { ...ANN, 'if-match': '"9"' })
      assert.equal(headed.data.updateOneCard.version, 3)
    })
  },
  versionedApp
)
