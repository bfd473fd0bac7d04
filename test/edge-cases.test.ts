import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import { koa, bodyParser } from '@feathersjs/koa'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { knexConfig } from '../example/database'
import { createApp } from '../example/app'
import { defineResource, errorHandler, feathersQuery, Field, FilterableField, IDField } from '../src'
import { forEachDatabase } from './support/server'
import { createFixtureApp } from './support/fixture-app'
import { clearTables, seedTodoItems } from './support/seed'

forEachDatabase('Edge cases: numbers, ids and dates that only look valid', (env) => {
  let id = 0
  before(async () => {
    await clearTables(env.server.db)
    ;[id] = await seedTodoItems(env.server.db, [{ title: 'only' }])
  })

  it('refuses offsets beyond safe integers instead of reading the wrong page', async () => {
    for (const offset of ['1e20', '1e23', String(2 ** 53)]) {
      const response = await env.server.http('GET', `/todo-items?offset=${offset}`)
      assert.equal(response.status, 400, offset)
      assert.deepEqual(response.body.errors.map((error: { field: string }) => error.field), ['offset'])
    }
  })

  it('takes only plain digits for an integer id', async () => {
    for (const raw of ['1e0', '1.0', '%20' + id + '%20', '+' + id, '0x1']) {
      const response = await env.server.http('GET', `/todo-items/${raw.replace('1', String(id))}`)
      assert.equal(response.status, 400, raw)
    }
    assert.equal((await env.server.http('GET', `/todo-items/${id}`)).status, 200)
  })

  it('names the parameter whose value the database cannot take', async () => {
    const response = await env.server.http('GET', '/todo-items?priority=1e400')
    assert.equal(response.status, 400)
    assert.deepEqual(response.body.errors.map((error: { field: string }) => error.field), ['priority'])
  })

  it('reads a query on a single-record endpoint as Feathers query syntax, refusing unknown fields', async () => {
    const response = await env.server.http('GET', `/todo-items/${id}?foo=bar`)
    assert.equal(response.status, 400)
    assert.deepEqual(
      response.body.errors.map((error: { field: string }) => error.field),
      ['foo']
    )
    const { completed } = (await env.server.http('GET', `/todo-items/${id}`)).body
    assert.equal((await env.server.http('GET', `/todo-items/${id}?completed=${completed}`)).status, 200)
    assert.equal((await env.server.http('GET', `/todo-items/${id}?completed=${!completed}`)).status, 404)
  })

  it('takes the same date-times over GraphQL as over REST: with an offset', async () => {
    const rest = await env.server.http('GET', '/todo-items?created=2026-01-01T00:00:00')
    assert.equal(rest.status, 400)
    for (const value of ['2026-01-01', '2026-01-01T00:00:00']) {
      const graphql = await env.server.http('POST', '/graphql', {
        query: `{ todoItems(filter: {created: {eq: "${value}"}}) { totalCount } }`
      })
      assert.equal(graphql.body.errors?.[0]?.extensions.code, 'GRAPHQL_VALIDATION_FAILED', value)
    }
    const exact = await env.server.http('POST', '/graphql', {
      query: '{ todoItems(filter: {created: {eq: "2026-01-01T02:00:00+02:00"}}) { totalCount } }'
    })
    assert.equal(exact.body.data.todoItems.totalCount, 1)
  })

  it('keeps SQL out of constraint errors', async () => {
    const response = await env.server.http('POST', '/todo-items', { title: 'x' }, { 'user-name': 'u'.repeat(300) })
    if (env.server.database === 'mysql') {
      assert.equal(response.status, 400)
      assert.deepEqual(response.body.errors, [{ field: 'body.createdBy', message: 'violates a database constraint' }])
    }
    assert.ok(!/insert into|select /i.test(response.text), response.text)
  })
})

forEachDatabase(
  'Edge cases: a failing application hook is not a database error',
  (env) => {
    it('answers a TypeError in a hook as an internal server error', async () => {
      const response = await env.server.http('POST', '/todo-items', { title: 'x' }, { 'x-break': 'yes' })
      assert.equal(response.status, 500)
      assert.equal(response.body.message, 'Internal server error')
      assert.deepEqual(await env.server.db('todo_items').where('title', 'x'), [])
    })
  },
  async (databaseUrl) => {
    const { app, db } = await createApp({ databaseUrl })
    app.service('todo-items').hooks({
      after: {
        create: [
          (context) => {
            if (context.params.headers?.['x-break']) (undefined as unknown as { boom(): void }).boom()
          }
        ]
      }
    })
    app.use(errorHandler(() => {}))
    return { app, db }
  }
)

forEachDatabase(
  'Edge cases: disabled endpoints',
  (env) => {
    it('answers 405 for a disabled create whatever the body', async () => {
      const response = await env.server.http('POST', '/widgets', 'not json', { 'content-type': 'text/plain' })
      assert.equal(response.status, 405)
    })
  },
  createFixtureApp
)

/** A parent scoped by defaultFilter, reached from children through a one-relation on a plain Field. */
async function scopedParentsApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('parents', (table) => {
    table.increments('id')
    table.boolean('active').notNullable()
  })
  await db.schema.createTable('kids', (table) => {
    table.increments('id')
    table.integer('parentId').notNullable()
  })
  await db('parents').insert([{ id: 1, active: false }, { id: 2, active: true }])
  await db('kids').insert([{ id: 1, parentId: 1 }, { id: 2, parentId: 2 }, { id: 3, parentId: 2 }])
  const parents = defineResource({
    name: 'Parent',
    schema: Type.Object({ id: IDField(Type.Integer()), active: FilterableField(Type.Boolean()) }),
    query: { defaultFilter: { active: { is: true } } },
    many: { kids: { resource: 'Kid', foreignKey: 'parentId' } },
    enableAggregate: true
  })
  const kids = defineResource({
    name: 'Kid',
    schema: Type.Object({ id: IDField(Type.Integer()), parentId: Field(Type.Integer()) }),
    one: { parent: { resource: 'Parent', foreignKey: 'parentId' } }
  })
  const app = koa(feathers())
  app.use(errorHandler(() => {}))
  app.use(bodyParser())
  app.configure(feathersQuery({ Model: db, resources: [parents, kids] }))
  return { app, db }
}

forEachDatabase(
  'Edge cases: relations agree with single reads',
  (env) => {
    it('resolves a one-relation like get: defaultFilter scopes collections, not references', async () => {
      const response = await env.server.http('POST', '/graphql', {
        query: '{ parent(id: 1) { id } kid(id: 1) { parent { id active } } }'
      })
      assert.deepEqual(response.body.data, { parent: { id: '1' }, kid: { parent: { id: '1', active: false } } })
    })

    it('aggregates a relation whose foreign key is a plain Field', async () => {
      const response = await env.server.http('POST', '/graphql', {
        query: '{ parents { edges { node { id kidsAggregate { count { id } } } } } }'
      })
      assert.equal(response.body.errors, undefined)
      assert.deepEqual(response.body.data.parents.edges, [{ node: { id: '2', kidsAggregate: [{ count: { id: 2 } }] } }])
    })
  },
  scopedParentsApp
)
