import assert from 'node:assert/strict'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { exampleResources } from '../example/resources'
import { forEachDatabase } from './support/server'
import { pluginApp } from './support/plugin-app'

const TIMEOUT = 300

/**
 * The example's resources on a pool of one connection, so that a test holding it in a transaction makes the
 * database as unreachable to the readiness probe as a hung server would.
 */
const oneConnectionApp = (health: unknown) => async (databaseUrl: string) => {
  const config = knexConfig(databaseUrl)
  const db = knex({ ...config, pool: { ...(config.pool as object), max: 1 } })
  await migrateLatest(db)
  return pluginApp(db, exampleResources, { plugin: { health: health as { timeout: number } } })
}

forEachDatabase(
  'Readiness and liveness routes',
  (env) => {
    it('answers 200 while the database answers, naming each database used', async () => {
      const response = await env.server.http('GET', '/health/ready')
      assert.equal(response.status, 200, response.text)
      assert.equal(response.body.status, 'ready')
      assert.deepEqual(
        response.body.databases.map((database: { client: string; status: string }) => [
          database.client,
          database.status
        ]),
        [[env.server.database, 'up']],
        "each database is named by its dialect, never by knex's client option"
      )
      assert.equal(response.headers.get('cache-control'), 'no-store')
      assert.deepEqual((await env.server.http('GET', '/health/live')).body, { status: 'alive' })
    })

    it('answers 503 within its timeout when the database does not answer, and 200 again after', async () => {
      const held: Knex.Transaction = await env.server.db.transaction()
      try {
        const started = performance.now()
        const response = await env.server.http('GET', '/health/ready')
        const took = performance.now() - started
        assert.equal(response.status, 503, response.text)
        assert.deepEqual(response.body.status, 'unavailable')
        assert.equal(response.body.databases[0].status, 'timeout')
        assert.ok(took < TIMEOUT + 1000, `answered in ${Math.round(took)} ms`)
        const again = await env.server.http('GET', '/health/ready')
        assert.equal(again.status, 503, 'a second probe waits for the same statement, as bounded')
        const live = await env.server.http('GET', '/health/live')
        assert.equal(live.status, 200, 'liveness touches no database')
      } finally {
        await held.rollback()
      }
      const recovered = await env.server.http('GET', '/health/ready')
      assert.equal(recovered.status, 200, recovered.text)
    })
  },
  oneConnectionApp({ timeout: TIMEOUT })
)

forEachDatabase(
  'Readiness route: off unless given',
  (env) => {
    it('serves no health route without the option', async () => {
      assert.equal((await env.server.http('GET', '/health/ready')).status, 404)
      assert.equal((await env.server.http('GET', '/health/live')).status, 404)
    })
  },
  oneConnectionApp(undefined)
)

describe('Readiness route: options given in code', () => {
  it('refuses at start-up a path without its leading slash, as the configuration does', async () => {
    const db = knex(knexConfig('sqlite::memory:'))
    try {
      assert.throws(
        () => pluginApp(db, exampleResources, { plugin: { health: { path: 'health' } } }),
        (error: Error) =>
          error.name === 'ConfigurationError' && /path must start with "\/"/.test(error.message)
      )
    } finally {
      await db.destroy()
    }
  })
})
