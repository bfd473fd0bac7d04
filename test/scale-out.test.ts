import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import socketioClient from '@feathersjs/socketio-client'
import knex from 'knex'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { io, type Socket } from 'socket.io-client'
import { startScript } from '../bench/support/processes'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { createTestDatabase, databaseNames, type DatabaseName } from './support/databases'
import { httpClient, type Http } from './support/http'

const REDIS = { host: '127.0.0.1', port: 6379 }
const INSTANCES = 3

function reachable({ host, port }: typeof REDIS) {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.end()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
    socket.setTimeout(1000, () => {
      socket.destroy()
      resolve(false)
    })
  })
}

/** One database for all instances: SQLite as a file (WAL lets processes share it), the others fresh. */
async function sharedDatabase(name: DatabaseName) {
  if (name !== 'sqlite') return createTestDatabase(name)
  const dir = mkdtempSync(join(tmpdir(), 'fq-scale-'))
  return {
    url: `sqlite:${join(dir, 'shared.sqlite')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true })
  }
}

interface ServiceEvent {
  event: string
  data: Record<string, unknown>
  at: number
}

interface Instance {
  http: Http
  socket: Socket
  /** The todo-items events this instance's socket.io client received. */
  events: ServiceEvent[]
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  client: ReturnType<typeof feathers<Record<string, any>>>
  stop(): void
}

async function startInstance(databaseUrl: string, syncKey: string): Promise<Instance> {
  const env = {
    DATABASE_URL: databaseUrl,
    SYNC_URL: `redis://${REDIS.host}:${REDIS.port}`,
    SYNC_KEY: syncKey
  }
  const server = startScript('support/example-server.ts', env)
  const port = Number((await server.ready).payload)
  const baseUrl = `http://127.0.0.1:${port}`
  const socket = io(baseUrl, { transports: ['websocket'], forceNew: true, reconnection: false })
  await new Promise<void>((resolve, reject) =>
    socket.once('connect', () => resolve()).once('connect_error', reject)
  )
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const client = feathers<Record<string, any>>().configure(socketioClient(socket))
  const events: ServiceEvent[] = []
  for (const event of ['created', 'patched', 'updated', 'removed']) {
    client
      .service('todo-items')
      .on(event, (data: Record<string, unknown>) => events.push({ event, data, at: Date.now() }))
  }
  return {
    http: httpClient(baseUrl),
    socket,
    events,
    client,
    stop() {
      socket.close()
      server.child.kill()
    }
  }
}

/** Waits until `done()` holds, checking every 20 ms, for at most `ms`. */
async function eventually(done: () => boolean, ms = 5000) {
  const until = Date.now() + ms
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
}

/**
 * Several processes of the example app behind no load balancer (each is asked directly) on one database,
 * their events synchronised by feathers-sync through Redis: what one instance writes, the others read, and a
 * client connected to any instance hears of it once.
 */
for (const name of databaseNames) {
  describe(`Scaling out: ${INSTANCES} instances on one database, events through Redis [${name}]`, function () {
    const instances: Instance[] = []
    let database: { url: string; drop(): Promise<void> } | undefined

    before(async function () {
      this.timeout(120000)
      if (!(await reachable(REDIS))) {
        console.log(`    (skipped: Redis is not reachable on ${REDIS.host}:${REDIS.port})`)
        this.skip()
      }
      database = await sharedDatabase(name)
      // Migrated once here: instances starting together would race for the migration lock.
      const db = knex(knexConfig(database.url))
      await migrateLatest(db)
      await db.destroy()
      // A channel of this run's own, so that other runs on the same Redis are not heard.
      const syncKey = `fq-test-${process.pid}-${randomBytes(4).toString('hex')}`
      for (let index = 0; index < INSTANCES; index++)
        instances.push(await startInstance(database.url, syncKey))
    })

    after(async () => {
      for (const instance of instances.splice(0)) instance.stop()
      await database?.drop()
    })

    it('reads on every instance what another wrote: REST and GraphQL', async () => {
      const [first, second, third] = instances
      const created = await first.http('POST', '/todo-items', { title: 'written on the first' })
      assert.equal(created.status, 201, created.text)
      const id = created.body.id
      for (const instance of [second, third]) {
        const read = await instance.http('GET', `/todo-items/${id}`)
        assert.equal(read.body.title, 'written on the first')
      }
      assert.equal((await second.http('PATCH', `/todo-items/${id}`, { completed: true })).status, 200)
      const query = `{ todoItems(filter: {id: {eq: ${id}}}) { edges { node { title completed } } } }`
      for (const instance of [first, third]) {
        const response = await instance.http('POST', '/graphql', { query })
        assert.deepEqual(response.body.data.todoItems.edges, [
          { node: { title: 'written on the first', completed: true } }
        ])
      }
      assert.equal((await third.http('DELETE', `/todo-items/${id}`)).status, 200)
      assert.equal((await first.http('GET', `/todo-items/${id}`)).status, 404)
    })

    it('sends each event once to socket.io clients of every instance, whichever instance wrote', async function () {
      this.timeout(30000)
      const [first, second, third] = instances
      const headers = { 'user-name': 'ann' }
      const created = await first.http('POST', '/todo-items', { title: 'heard everywhere' }, headers)
      const id = created.body.id
      const patching = Date.now()
      await second.client.service('todo-items').patch(id, { priority: 3 })
      await third.http('DELETE', `/todo-items/${id}`)
      // Only this record's events: the previous test's may still be on their way.
      const eventsOf = (instance: Instance) => instance.events.filter((event) => event.data.id === id)
      await eventually(() => instances.every((instance) => eventsOf(instance).length >= 3))
      for (const [index, instance] of instances.entries()) {
        const heard = eventsOf(instance).map(({ event, data }) => [event, data.id, data.title, data.priority])
        assert.deepEqual(
          heard,
          [
            ['created', id, 'heard everywhere', 0],
            ['patched', id, 'heard everywhere', 3],
            ['removed', id, 'heard everywhere', 3]
          ],
          `instance ${index + 1}`
        )
        // Hidden fields stay on the server on every instance, also after a trip through Redis.
        for (const { data } of eventsOf(instance)) assert.ok(!('createdBy' in data) && !('updatedBy' in data))
      }
      const latest = Math.max(...instances.map((instance) => eventsOf(instance)[1].at - patching))
      console.log(
        `      (the patch's event reached the last instance's client ${latest} ms after it was sent)`
      )
    })
  })
}
