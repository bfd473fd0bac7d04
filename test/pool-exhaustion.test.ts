import assert from 'node:assert/strict'
import knex from 'knex'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'
import { databaseNames } from './support/databases'
import { pluginApp } from './support/plugin-app'
import { startServer, type TestServer } from './support/server'

/**
 * Every pooled connection taken (here: the one of a pool of one, held by a transaction of the test's): a request
 * that waits for one longer than knex's `acquireConnectionTimeout` is a 503 to retry, reads and writes alike,
 * and nothing is written.
 */
for (const name of databaseNames.filter((database) => database !== 'sqlite')) {
  describe(`A pool with no connection to spare [${name}]`, () => {
    let server: TestServer

    before(async () => {
      server = await startServer(name, async (databaseUrl) => {
        const db = knex({
          ...knexConfig(databaseUrl),
          pool: { min: 0, max: 1 },
          acquireConnectionTimeout: 300
        })
        await migrateLatest(db)
        return pluginApp(db, [todoItemResource, subTaskResource, ...tagResources])
      })
    })

    after(() => server?.close())

    it('answers 503 when no connection frees up in time, and serves again once one does', async () => {
      const holder = await server.db.transaction()
      try {
        for (const [method, path, body] of [
          ['GET', '/todo-items'],
          ['POST', '/todo-items', { title: 'waits' }],
          ['POST', '/graphql', { query: '{ todoItems { totalCount } }' }]
        ] as const) {
          const response = await server.http(method, path, body)
          if (path === '/graphql') {
            assert.equal(response.body.errors?.[0]?.extensions.code, 'SERVICE_UNAVAILABLE', response.text)
          } else {
            assert.equal(response.status, 503, `${method} ${path}: ${response.text}`)
            assert.equal(response.body.name, 'Unavailable')
          }
        }
      } finally {
        await holder.rollback()
      }
      assert.equal((await server.http('GET', '/todo-items')).status, 200)
      assert.equal((await server.http('GET', '/todo-items?title=waits')).body.totalCount, 0)
    })
  })
}
