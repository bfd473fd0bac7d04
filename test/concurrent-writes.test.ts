import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import knex from 'knex'
import { createApp } from '../example/app'
import { databaseNames } from './support/databases'
import { startServer, type TestServer } from './support/server'
import { seedTodoItems } from './support/seed'

/**
 * Two writes that each wait, in their after hook, until the other has written too (or 3 s have passed), and
 * then touch the other's record: patch it (`x-then-patch`), which deadlocks, or read it (`x-then-get`), which
 * under SERIALIZABLE is a write skew the database must refuse.
 */
async function appWithCrossingWrites(databaseUrl: string) {
  const { app, db } = await createApp({ databaseUrl })
  let arrived = 0
  let release: () => void = () => {}
  const bothArrived = new Promise<void>((resolve) => (release = resolve))
  const cross = async (context: HookContext) => {
    const headers = context.params.headers ?? {}
    const other = headers['x-then-patch'] ?? headers['x-then-get']
    if (!other) return
    if (++arrived === 2) release()
    await Promise.race([bothArrived, new Promise((resolve) => setTimeout(resolve, 3000))])
    const service = context.app.service('todo-items')
    if (headers['x-then-patch']) await service.patch(other, { title: `crossed by ${context.id}` })
    else await service.get(other)
  }
  app.service('todo-items').hooks({ after: { patch: [cross] } })
  return { app, db }
}

/** The same app on a PostgreSQL database whose transactions are SERIALIZABLE, as an application may choose. */
async function serializableAppWithCrossingWrites(databaseUrl: string) {
  const admin = knex({ client: 'pg', connection: databaseUrl })
  const database = new URL(databaseUrl).pathname.slice(1)
  await admin.raw(`ALTER DATABASE ?? SET default_transaction_isolation = 'serializable'`, [database])
  await admin.destroy()
  return appWithCrossingWrites(databaseUrl)
}

const networked = (['mysql', 'postgres'] as const).filter((name) => databaseNames.includes(name))

for (const name of networked) {
  describe(`Concurrent writes that cannot both go through [${name}]`, function () {
    let server: TestServer

    // A fresh app per test: its hooks' meeting point serves one pair of requests.
    afterEach(() => server?.close())

    async function crossingPatches(header: 'x-then-patch' | 'x-then-get') {
      const [first, second] = await seedTodoItems(server.db, [{ title: 'first' }, { title: 'second' }])
      const responses = await Promise.all([
        server.http('PATCH', `/todo-items/${first}`, { priority: 1 }, { [header]: String(second) }),
        server.http('PATCH', `/todo-items/${second}`, { priority: 2 }, { [header]: String(first) })
      ])
      return { ids: [first, second], responses }
    }

    it('answers a deadlock with a 409 to retry; the other write goes through, the refused one leaves nothing', async function () {
      this.timeout(60000)
      server = await startServer(name, appWithCrossingWrites)
      const { ids, responses } = await crossingPatches('x-then-patch')
      const statuses = responses.map((response) => response.status).sort()
      assert.deepEqual(statuses, [200, 409], responses.map((response) => response.text).join('\n'))
      const refused = responses.find((response) => response.status === 409)!
      assert.equal(refused.body.name, 'Conflict')
      assert.match(refused.body.message, /retry/)
      const rows = await server.db('todo_items').whereIn('id', ids).orderBy('id')
      const winner = responses.findIndex((response) => response.status === 200)
      // The winner's own patch and its crossing patch of the other record, nothing of the loser's.
      assert.equal(rows[winner].priority, winner + 1)
      assert.equal(rows[1 - winner].priority, 0)
      assert.equal(rows[1 - winner].title, `crossed by ${ids[winner]}`)
    })

    if (name === 'postgres') {
      it('answers a serialization failure under SERIALIZABLE with a 409 to retry', async function () {
        this.timeout(60000)
        server = await startServer(name, serializableAppWithCrossingWrites)
        const { responses } = await crossingPatches('x-then-get')
        const statuses = responses.map((response) => response.status).sort()
        assert.deepEqual(statuses, [200, 409], responses.map((response) => response.text).join('\n'))
        assert.match(responses.find((response) => response.status === 409)!.body.message, /retry/)
      })
    }
  })
}

/** Whether a statement of `db`'s server waits for a row lock another transaction holds. */
async function someoneWaitsForALock(db: knex.Knex, name: 'mysql' | 'postgres') {
  if (name === 'postgres') {
    const { rows } = await db.raw(
      "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    )
    return rows[0].waiting > 0
  }
  // MariaDB lists the waiting UPDATE in its process list, state "Updating", while the row lock is held.
  const [rows] = await db.raw(
    "SELECT count(*) AS waiting FROM information_schema.processlist WHERE state = 'Updating' AND info LIKE 'update %'"
  )
  return Number(rows[0].waiting) > 0
}

for (const name of networked) {
  describe(`A multi write racing a delete [${name}]`, function () {
    let server: TestServer
    afterEach(() => server?.close())

    it('answers a multi patch whose records another call removed meanwhile with a 409 to retry, not a 403', async function () {
      this.timeout(60000)
      server = await startServer(name)
      const ids = await seedTodoItems(server.db, [
        { title: 'race a' },
        { title: 'race b' },
        { title: 'race c' }
      ])
      // Another connection removes one of them and holds its lock, so the patch reaches all three, then waits.
      const trx = await server.db.transaction()
      try {
        await trx('todo_items').where('id', ids[2]).delete()
        const patch = server.http(
          'PATCH',
          '/todo-items?title[$like]=race%25',
          { priority: 7 },
          {
            'x-query-syntax': 'feathers'
          }
        )
        let answered: unknown
        void patch.then((response) => (answered = response.text))
        const deadline = Date.now() + 10000
        while (!(await someoneWaitsForALock(server.db, name))) {
          assert.ok(Date.now() < deadline && answered === undefined, `the patch never waited: ${answered}`)
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        await trx.commit()
        const response = await patch
        assert.equal(response.status, 409, response.text)
        assert.equal(response.body.name, 'Conflict')
        assert.match(response.body.message, /try again/)
        // Nothing of the refused patch is left.
        const rows = await server.db('todo_items').whereIn('id', ids).orderBy('id')
        assert.deepEqual(
          rows.map((row) => Number(row.priority)),
          [0, 0]
        )
      } finally {
        if (!trx.isCompleted()) await trx.rollback()
      }
    })
  })
}
