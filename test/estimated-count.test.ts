import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { defineResource, FilterableField, IDField, QUERY_SYNTAX_HEADER } from '../src'
import { knexConfig } from '../example/database'
import { graphql } from './support/graphql'
import { pluginApp } from './support/plugin-app'
import { forEachDatabase } from './support/server'

const ROWS = 2000
const RARE = 12

const schema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  kind: FilterableField(Type.String())
})

/** Always the planner's estimate (where the database has one). */
const readings = defineResource({
  name: 'Reading',
  schema,
  caching: { enabled: false },
  query: { enableTotalCount: true, countStrategy: 'planned' }
})

/** Exact below 500 planned rows, estimated above. */
const samples = defineResource({
  name: 'Sample',
  schema,
  caching: { enabled: false },
  query: { enableTotalCount: true, countStrategy: 'estimated', exactCountBelow: 500 }
})

async function countsApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  for (const table of ['readings', 'samples']) {
    await db.schema.createTable(table, (columns) => {
      columns.increments('id')
      columns.string('kind').notNullable().index()
    })
    const rows = Array.from({ length: ROWS }, (_, index) => ({ kind: index < RARE ? 'rare' : 'common' }))
    for (let start = 0; start < rows.length; start += 250)
      await db(table).insert(rows.slice(start, start + 250))
    // The planner's statistics, as autovacuum or InnoDB's persistent statistics would have them.
    if (db.client.config.client === 'pg') await db.raw('ANALYZE ??', [table])
    if (db.client.config.client === 'mysql2') await db.raw('ANALYZE TABLE ??', [table])
  }
  return pluginApp(db, [readings, samples], { transports: true })
}

forEachDatabase(
  'Page totals: exact, planned or estimated counts (countStrategy)',
  (env) => {
    const plans = () => env.server.database !== 'sqlite'
    /** Near the real number: planners are off by a few percent on fresh statistics. */
    const near = (total: number, real: number) => Math.abs(total - real) <= real * 0.5

    it('planned: the planner estimate, flagged, without a COUNT; SQLite, which has none, counts', async () => {
      const statements = await env.server.recordStatements(async () => {
        const list = await env.server.http('GET', '/readings?limit=5')
        assert.equal(list.status, 200)
        assert.ok(near(list.body.totalCount, ROWS), String(list.body.totalCount))
        assert.equal(list.body.totalCountIsEstimate, plans() ? true : undefined)
        if (!plans()) assert.equal(list.body.totalCount, ROWS)
      })
      const counted = statements.some((sql) => /count\(\*\)/i.test(sql))
      const explained = statements.some((sql) => /^explain/i.test(sql))
      assert.deepEqual([counted, explained], plans() ? [false, true] : [true, false], statements.join('\n'))
    })

    it('estimated: exact while the planner expects few rows, the estimate above exactCountBelow', async () => {
      const few = await env.server.http('GET', '/samples?kind=rare&limit=5')
      assert.deepEqual([few.body.totalCount, few.body.totalCountIsEstimate], [RARE, undefined])
      const many = await env.server.http('GET', '/samples?limit=5')
      assert.ok(near(many.body.totalCount, ROWS), String(many.body.totalCount))
      assert.equal(many.body.totalCountIsEstimate, plans() ? true : undefined)
    })

    it('a page that ends the records counts them exactly, whatever the strategy', async () => {
      const last = await env.server.http('GET', `/readings?limit=50&offset=${ROWS - 10}`)
      assert.deepEqual([last.body.totalCount, last.body.totalCountIsEstimate], [ROWS, undefined])
    })

    it('GraphQL flags the estimate beside totalCount; Feathers answers carry it beside total', async () => {
      const answer = await graphql(
        env.server,
        '{ readings(paging: { first: 3 }) { totalCount totalCountIsEstimate } }'
      )
      assert.equal(answer.errors, undefined, JSON.stringify(answer.errors))
      assert.equal(answer.data.readings.totalCountIsEstimate, plans())
      assert.ok(near(answer.data.readings.totalCount, ROWS))
      const feathersPage = await env.server.http('GET', '/readings?$limit=2', undefined, {
        [QUERY_SYNTAX_HEADER]: 'feathers'
      })
      assert.equal(feathersPage.body.totalIsEstimate, plans() ? true : undefined)
      assert.ok(near(feathersPage.body.total, ROWS))
    })
  },
  countsApp
)
