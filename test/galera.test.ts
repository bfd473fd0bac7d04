import assert from 'node:assert/strict'
import knex from 'knex'
import { randomBytes } from 'node:crypto'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { eventually, freshSyncKey, reachable, REDIS, startInstance, type Instance } from './support/instances'
import type { HttpResponse } from './support/http'

/** The nodes of a Galera cluster, e.g. from `scripts/galera-cluster.sh start`; the test skips without them. */
const NODE_URLS = (process.env.GALERA_URLS ?? '').split(',').filter(Boolean)

/** Retries a write the cluster refused as a certification conflict (409), as a client is told to. */
async function retried(write: () => Promise<HttpResponse>, attempts = 30) {
  let refused = 0
  for (let attempt = 0; attempt < attempts; attempt++) {
    const response = await write()
    if (response.status !== 409) return { response, refused }
    refused++
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20))
  }
  throw new Error(`still refused after ${attempts} attempts`)
}

/**
 * Three instances of the example, each on its own node of a MariaDB Galera cluster, events shared through
 * Redis: a read on one node sees what another node committed (the nodes run with wsrep_sync_wait=1), and
 * concurrent writes from all instances lose and duplicate nothing.
 */
describe('Scaling out on a Galera cluster: three instances, each on its own node', function () {
  const instances: Instance[] = []
  let database = ''

  before(async function () {
    this.timeout(180000)
    if (NODE_URLS.length < 3) {
      console.log(
        '    (skipped: set GALERA_URLS, e.g. from scripts/galera-cluster.sh start, to run the Galera test)'
      )
      this.skip()
    }
    if (!(await reachable(REDIS))) {
      console.log(`    (skipped: Redis is not reachable on ${REDIS.host}:${REDIS.port})`)
      this.skip()
    }
    // Created and migrated through the first node; Galera replicates the DDL to the others.
    database = `fq_galera_${process.pid}_${randomBytes(4).toString('hex')}`
    const admin = knex({ client: 'mysql2', connection: NODE_URLS[0] })
    await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', [database])
    await admin.destroy()
    const urls = NODE_URLS.slice(0, 3).map((url) => {
      const parsed = new URL(url)
      parsed.pathname = `/${database}`
      return parsed.toString()
    })
    const db = knex(knexConfig(urls[0]))
    await migrateLatest(db)
    await db.destroy()
    const syncKey = freshSyncKey()
    for (const url of urls) instances.push(await startInstance(url, syncKey))
  })

  after(async () => {
    for (const instance of instances.splice(0)) instance.stop()
    if (!database) return
    const admin = knex({ client: 'mysql2', connection: NODE_URLS[0] })
    await admin.raw('DROP DATABASE IF EXISTS ??', [database])
    await admin.destroy()
  })

  it('reads on every node what another node just committed', async function () {
    this.timeout(60000)
    for (let round = 0; round < 30; round++) {
      const writer = instances[round % 3]
      const created = await writer.http('POST', '/todo-items', { title: `round ${round}` })
      assert.equal(created.status, 201, created.text)
      for (const reader of instances.filter((instance) => instance !== writer)) {
        const read = await reader.http('GET', `/todo-items/${created.body.id}`)
        assert.equal(read.status, 200, `round ${round}: ${read.text}`)
        assert.equal(read.body.title, `round ${round}`)
      }
    }
  })

  it('creates from all instances at once: every record once, ids unique', async function () {
    this.timeout(60000)
    const writes = instances.flatMap((instance, index) =>
      Array.from({ length: 20 }, (_, number) =>
        retried(() => instance.http('POST', '/todo-items', { title: `burst ${index}-${number}` }))
      )
    )
    const results = await Promise.all(writes)
    for (const { response } of results) assert.equal(response.status, 201, response.text)
    const ids = results.map(({ response }) => response.body.id)
    assert.equal(new Set(ids).size, 60)
    for (const instance of instances) {
      const list = await instance.http('GET', `/todo-items?title=${encodeURIComponent('burst 0-0')}`)
      assert.equal(list.body.nodes?.length, 1, list.text)
    }
    const db = knex({ client: 'mysql2', connection: `${NODE_URLS[2].replace(/\/[^/]*$/, '')}/${database}` })
    const [{ n }] = await db('todo_items').where('title', 'like', 'burst %').count({ n: '*' })
    await db.destroy()
    assert.equal(Number(n), 60)
  })

  it('patches one record from all instances at once: conflicts are 409s to retry, every acknowledged write heard once', async function () {
    this.timeout(120000)
    const created = await instances[0].http('POST', '/todo-items', { title: 'contended' })
    const id = created.body.id
    const patches = instances.flatMap((instance, index) =>
      Array.from({ length: 10 }, (_, number) =>
        retried(() => instance.http('PATCH', `/todo-items/${id}`, { title: `patch ${index}-${number}` }))
      )
    )
    const results = await Promise.all(patches)
    for (const { response } of results) assert.equal(response.status, 200, response.text)
    const refused = results.reduce((sum, result) => sum + result.refused, 0)
    // Every instance's client hears each acknowledged patch once, and no refused one.
    const patchedEvents = (instance: Instance) =>
      instance.events.filter((event) => event.event === 'patched' && event.data.id === id)
    await eventually(() => instances.every((instance) => patchedEvents(instance).length >= 30), 10000)
    const titles = new Set(results.map(({ response }) => response.body.title))
    for (const instance of instances) {
      const heard = patchedEvents(instance).map((event) => event.data.title)
      assert.equal(heard.length, 30)
      assert.deepEqual(new Set(heard), titles)
    }
    // All nodes agree on the record, and it is one of the acknowledged writes.
    const final = await Promise.all(instances.map((instance) => instance.http('GET', `/todo-items/${id}`)))
    assert.equal(new Set(final.map((response) => response.body.title)).size, 1)
    assert.ok(titles.has(final[0].body.title))
    console.log(`      (${refused} certification conflicts answered 409 and retried)`)
  })
})
