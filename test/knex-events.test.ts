import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, numberedItems, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'

interface ReportedQuery {
  sql: string
  __knexQueryUid?: string
}

/**
 * The plugin runs its compiled statements itself rather than through `knex.raw`; the application's knex
 * instance must still hear of them as it hears of its own: each statement reported to `on('query')` and its
 * result to `on('query-response')` under one query id of its own, which listeners that time statements pair
 * them by (a page and its count run side by side).
 */
forEachDatabase("The knex instance hears the plugin's statements as knex reports its own", (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(env.server.db, numberedItems(30))
  })

  it('pairs each query with its response by a query id no other statement has', async () => {
    const asked: ReportedQuery[] = []
    const answered: ReportedQuery[] = []
    const onQuery = (query: ReportedQuery) => asked.push(query)
    const onResponse = (_response: unknown, query: ReportedQuery) => answered.push(query)
    const { db } = env.server
    db.on('query', onQuery)
    db.on('query-response', onResponse)
    try {
      // A full page with the example's totalCount: the page, its count a subquery of its statement.
      const list = await env.server.http('GET', '/todo-items?limit=5')
      assert.equal(list.status, 200)
      assert.equal(list.body.totalCount, 30)
      const aggregate = await graphql(
        env.server,
        '{ todoItemAggregate { groupBy { completed } count { id } } }'
      )
      assert.equal(aggregate.errors, undefined, JSON.stringify(aggregate.errors))
      const one = await graphql(env.server, '{ todoItems(paging: {first: 2}) { edges { node { title } } } }')
      assert.equal(one.errors, undefined, JSON.stringify(one.errors))
    } finally {
      db.removeListener('query', onQuery)
      db.removeListener('query-response', onResponse)
    }
    assert.ok(asked.length >= 3, `statements heard: ${asked.length}`)
    const ids = asked.map((query) => query.__knexQueryUid)
    assert.ok(
      ids.every((id) => typeof id === 'string' && id.length > 0),
      JSON.stringify(ids)
    )
    assert.equal(new Set(ids).size, ids.length, 'every statement has an id of its own')
    assert.deepEqual(
      answered.map((query) => [query.__knexQueryUid, query.sql]).sort(),
      asked.map((query) => [query.__knexQueryUid, query.sql]).sort()
    )
  })
})
