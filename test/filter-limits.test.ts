import assert from 'node:assert/strict'
import type { ResourceService } from '../src'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'
import { exampleResourcesApp } from './support/example-resources-app'

/**
 * What one filter may hold is bounded in the query model, the same on every database and for every surface
 * (GraphQL, REST, export, aggregates, calls from hooks): below what any supported database can run, so a
 * filter is either answered or refused with a 400 naming where it went too far, never a database error.
 */
const COUNT = `query Count($filter: TodoItemFilter) { todoItems(filter: $filter) { totalCount } }`
const AGGREGATE = `query Aggregate($filter: TodoItemAggregateFilter) {
  todoItemAggregate(filter: $filter) { count { id } }
}`

const orOf = (members: number) => ({
  or: Array.from({ length: members }, (_, index) => ({ priority: { eq: index } }))
})
const listOf = (length: number, from = 0) => Array.from({ length }, (_, index) => from + index)

forEachDatabase('Filter limits: what one filter may hold', (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(
      env.server.db,
      listOf(20).map((index) => ({ title: `t${index}`, priority: index }))
    )
  })

  async function refused(filter: unknown, query = COUNT) {
    const response = await graphql(env.server, query, { filter })
    assert.deepEqual(codes(response), ['BAD_USER_INPUT'], JSON.stringify(response.errors))
    return response.errors![0]
  }

  async function counted(filter: unknown) {
    const response = await graphql(env.server, COUNT, { filter })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    return response.data.todoItems.totalCount as number
  }

  it('refuses an or with more members than a filter may compare (SQLite failed at 999)', async () => {
    const error = await refused(orOf(999))
    assert.match(error.message, /at most 100/)
    assert.deepEqual(error.extensions.errors, [{ field: 'or', message: 'must have at most 100 members' }])
    await refused(orOf(999), AGGREGATE)
  })

  it('refuses more comparisons than allowed however they are nested', async () => {
    const nested = { and: [orOf(60), orOf(41)] }
    const error = await refused(nested)
    assert.deepEqual(
      error.extensions.errors!.map((entry) => entry.field),
      ['and.1.or.40.priority.eq']
    )
    assert.match(error.message, /at most 100 comparisons/)
  })

  it('answers the largest filter allowed, deepest nesting included, on every database', async () => {
    assert.equal(await counted(orOf(100)), 20)
    let deep: unknown = orOf(84)
    for (let level = 0; level < 15; level++) deep = { and: [deep, { priority: { gte: 0 } }] }
    assert.equal(await counted(deep), 20)
  })

  it('refuses more bound values than allowed (SQLite failed past 32,766)', async () => {
    const lists = Array.from({ length: 11 }, (_, index) => ({
      priority: { notIn: listOf(1000, 1000 * (index + 1)) }
    }))
    const error = await refused({ and: lists })
    assert.deepEqual(
      error.extensions.errors!.map((entry) => entry.field),
      ['and.10.priority.notIn']
    )
    assert.match(error.message, /at most 10000 values/)
    assert.equal(await counted({ and: lists.slice(0, 10) }), 20)
  })

  it('refuses a list longer than allowed', async () => {
    const error = await refused({ priority: { in: listOf(1001) } })
    const expected = [{ field: 'priority.in', message: 'must have at most 1000 values' }]
    assert.deepEqual(error.extensions.errors, expected)
  })

  it('refuses a pattern longer than allowed (SQLite failed past 50,000 bytes)', async () => {
    for (const operator of ['like', 'notLike', 'iLike', 'notILike']) {
      const error = await refused({ title: { [operator]: `%${'x'.repeat(1000)}` } })
      assert.deepEqual(error.extensions.errors, [
        { field: `title.${operator}`, message: 'must be at most 1000 characters long' }
      ])
    }
    await refused({ title: { like: '%'.repeat(50001) } })
    assert.equal(await counted({ title: { like: `t1%${'%'.repeat(997)}` } }), 11)
  })

  it('bounds the export, aggregates and calls from hooks alike', async () => {
    const service = env.server.app.service('todo-items') as unknown as ResourceService
    const tooMany = (error: { code: number; errors: Array<{ field: string }> }) =>
      error.code === 400 && error.errors[0].field === 'or'
    await assert.rejects(
      service.find({ queryModel: true, query: { filter: orOf(101), paging: { limit: 1 } } }),
      tooMany
    )
    await assert.rejects(
      service.find({ queryModel: true, query: { filter: orOf(101), paging: { limit: 1 }, keyset: {} } }),
      tooMany
    )
    await assert.rejects(
      service.aggregate({ count: ['id'] }, { queryModel: true, query: { filter: orOf(101) } }),
      tooMany
    )
  })
})

forEachDatabase(
  'Filter limits: configured',
  (env) => {
    it('applies the configured limits', async () => {
      const three = { or: [{ id: { eq: 1 } }, { id: { eq: 2 } }, { id: { in: [1, 2, 3] } }] }
      const small = await graphql(env.server, COUNT, { filter: three })
      assert.equal(small.errors, undefined, JSON.stringify(small.errors))
      const many = await graphql(env.server, COUNT, { filter: { or: orOf(4).or } })
      assert.deepEqual(codes(many), ['BAD_USER_INPUT'])
      const list = await graphql(env.server, COUNT, { filter: { id: { in: [1, 2, 3, 4] } } })
      const expected = [{ field: 'id.in', message: 'must have at most 3 values' }]
      assert.deepEqual(list.errors?.[0].extensions.errors, expected)
      const six = { id: { in: [1, 2, 3] }, priority: { in: [1, 2, 3] } }
      const values = await graphql(env.server, COUNT, { filter: six })
      assert.match(values.errors?.[0].message ?? '', /at most 5 values/)
      const pattern = await graphql(env.server, COUNT, { filter: { title: { like: 'abcd' } } })
      assert.match(pattern.errors?.[0].message ?? '', /at most 3 characters/)
      const deep = await graphql(env.server, COUNT, { filter: { and: [{ and: [{ id: { eq: 1 } }] }] } })
      assert.match(deep.errors?.[0].message ?? '', /at most 1 level/)
    })
  },
  exampleResourcesApp({
    quietErrors: true,
    limits: {
      maxComparisons: 3,
      maxListLength: 3,
      maxFilterValues: 5,
      maxPatternLength: 3,
      maxFilterDepth: 1
    }
  })
)
