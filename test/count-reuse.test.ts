import assert from 'node:assert/strict'
import knex from 'knex'
import { forEachDatabase, type TestServer } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'
import { accessToken, bearer, createAuthApp } from './support/auth-app'
import { pluginApp } from './support/plugin-app'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { exampleResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'

/** How many of `statements` count records: a count read with a page is a subquery of the page's statement. */
const countsIn = (statements: string[]) =>
  statements.filter((sql) => /count\(\*\) as [`"]?total/i.test(sql)).length

/** A REST list page with its count, and how many counts answering it read. */
async function list(server: TestServer, headers: Record<string, string> = {}) {
  let body: any
  const statements = await server.recordStatements(async () => {
    // One record a page: the count is never told by a last page (where SQLite reads no count at all).
    const response = await server.http('GET', '/todo-items?limit=1', undefined, headers)
    assert.equal(response.status, 200, JSON.stringify(response.body))
    body = response.body
  })
  // The page is read by one statement, with or without its count.
  assert.equal(statements.length, 1, statements.join('\n'))
  return { total: body.totalCount as number, counts: countsIn(statements) }
}

forEachDatabase('Counts reused while nothing is written', (env) => {
  let firstId: number
  before(async () => {
    await clearTables(env.server.db)
    ;[firstId] = await seedTodoItems(
      env.server.db,
      Array.from({ length: 12 }, (_, index) => ({ title: `item ${index}` }))
    )
  })

  it('a list polled unchanged counts once; any service write makes it count again', async () => {
    const first = await list(env.server)
    assert.deepEqual(first, { total: 12, counts: 1 })
    assert.deepEqual(await list(env.server), { total: 12, counts: 0 })
    const created = await env.server.http('POST', '/todo-items', { title: 'over REST' })
    assert.equal(created.status, 201)
    assert.deepEqual(await list(env.server), { total: 13, counts: 1 })
    await env.server.app.service('todo-items').create({ title: 'from code' })
    assert.deepEqual(await list(env.server), { total: 14, counts: 1 })
    await env.server.app.service('sub-tasks').create({ title: 'elsewhere', todoItemId: String(firstId) })
    assert.deepEqual(await list(env.server), { total: 14, counts: 1 })
    assert.deepEqual(await list(env.server), { total: 14, counts: 0 })
  })

  it('a filter of its own is counted apart; GraphQL totalCount reuses the count too', async () => {
    const filtered = async () => {
      let total = 0
      const statements = await env.server.recordStatements(async () => {
        const response = await env.server.http('GET', '/todo-items?limit=1&completed=true')
        total = response.body.totalCount
      })
      return { total, counts: countsIn(statements) }
    }
    const [one, two] = await seedTodoItems(env.server.db, [
      { title: 'done 1', completed: true },
      { title: 'done 2', completed: true }
    ])
    // Rows put in beside the services: a write through them makes the counts be read again.
    await env.server.app.service('todo-items').patch(one, { priority: 1 })
    assert.ok(two > one)
    const unfiltered = await list(env.server)
    assert.deepEqual(await filtered(), { total: 2, counts: 1 })
    assert.deepEqual(await filtered(), { total: 2, counts: 0 })
    assert.deepEqual(await list(env.server), { total: unfiltered.total, counts: 0 })
    const count = async () => {
      let total = 0
      const statements = await env.server.recordStatements(async () => {
        const response = await graphql(env.server, '{ todoItems(paging: { first: 1 }) { totalCount } }')
        total = response.data.todoItems.totalCount
      })
      return { total, counts: countsIn(statements) }
    }
    // The page of ids only: the count is the REST list's, the same filter for the same caller.
    assert.deepEqual(await count(), { total: unfiltered.total, counts: 0 })
    await env.server.app.service('todo-items').patch(firstId, { completed: false })
    assert.deepEqual(await count(), { total: unfiltered.total, counts: 1 })
    assert.deepEqual(await count(), { total: unfiltered.total, counts: 0 })
  })

  it('does not see a write that bypasses the services (documented: caching.enabled false for such data)', async () => {
    const before = await list(env.server)
    await env.server.db('todo_items').insert({
      title: 'raw',
      completed: false,
      priority: 0,
      created: new Date(),
      updated: new Date()
    })
    assert.deepEqual(await list(env.server), { total: before.total, counts: 0 })
    await env.server.app.service('todo-items').patch(null, { priority: 1 }, { query: { title: 'raw' } })
    assert.deepEqual(await list(env.server), { total: before.total + 1, counts: 1 })
  })
})

forEachDatabase(
  'Counts reused per caller',
  (env) => {
    it('never gives one caller the count of another who sees other records', async () => {
      const tokens = { ann: await accessToken(env.server, 'ann'), bob: await accessToken(env.server, 'bob') }
      for (const title of ['a1', 'a2', 'a3']) {
        await env.server.http('POST', '/todo-items', { title }, bearer(tokens.ann))
      }
      for (const title of ['b1', 'b2']) {
        await env.server.http('POST', '/todo-items', { title }, bearer(tokens.bob))
      }
      assert.deepEqual(await list(env.server, bearer(tokens.ann)), { total: 3, counts: 1 })
      assert.deepEqual(await list(env.server, bearer(tokens.ann)), { total: 3, counts: 0 })
      assert.deepEqual(await list(env.server, bearer(tokens.bob)), { total: 2, counts: 1 })
      assert.deepEqual(await list(env.server, bearer(tokens.bob)), { total: 2, counts: 0 })
      assert.deepEqual(await list(env.server, bearer(tokens.ann)), { total: 3, counts: 0 })
    })
  },
  createAuthApp
)

forEachDatabase(
  'Counts of a resource without caching',
  (env) => {
    it('are counted on every request', async () => {
      await seedTodoItems(
        env.server.db,
        Array.from({ length: 8 }, (_, index) => ({ title: `item ${index}` }))
      )
      assert.deepEqual(await list(env.server), { total: 8, counts: 1 })
      assert.deepEqual(await list(env.server), { total: 8, counts: 1 })
    })
  },
  async (databaseUrl) => {
    const db = knex(knexConfig(databaseUrl))
    await migrateLatest(db)
    const resources = exampleResources.map((resource) =>
      resource.name === todoItemResource.name ? { ...resource, caching: { enabled: false } } : resource
    )
    return pluginApp(db, resources)
  }
)
