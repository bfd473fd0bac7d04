import assert from 'node:assert/strict'
import type { ResourceService } from '../src'
import { forEachDatabase } from './support/server'
import { clearTables, numberedItems, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'
import { aliased, assertServedMeanwhile, probeDuring } from './support/contention'

const RECORDS = 50_000
const ALIASES = 5
const MAX_GROUPS = 1000

forEachDatabase('Limits: the work of a request whose aggregates group into too many groups', (env) => {
  let firstId: number

  before(async function () {
    this.timeout(120000)
    await clearTables(env.server.db)
    ;[firstId] = await seedTodoItems(env.server.db, numberedItems(RECORDS), 2000)
  })

  // Descriptions have no index: each grouping by them sorts or hashes every record before its first group.
  const byDescription = 'todoItemAggregate { groupBy { description } count { id } }'

  it('groups in full only until one alias is refused; the others count distinct keys up to the cap', async function () {
    this.timeout(60000)
    let response: any
    const statements = await env.server.recordStatements(async () => {
      response = await graphql(env.server, `{ ${aliased(ALIASES, byDescription)} }`)
    })
    // Every alias is non-null: the first refusal nulls the data, and the response reports that one.
    assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
    assert.match(response.errors[0].message, new RegExp(`more than ${MAX_GROUPS} groups`))
    const groupings = statements.filter((sql) => /group by/i.test(sql))
    const probes = statements.filter((sql) => /select distinct/i.test(sql))
    // Up to two aliases run at once (graphql.limits.maxConcurrentStatements) before the first refusal.
    assert.ok(groupings.length >= 1 && groupings.length <= 2, `${groupings.length} full groupings`)
    assert.equal(probes.length, ALIASES - groupings.length)
    assert.match(probes[0], new RegExp(`limit ${MAX_GROUPS + 1}\\b`, 'i'))
  })

  it('answers a grouping that fits after a refusal, and a refusal in one request costs no other', async function () {
    this.timeout(60000)
    const service = env.server.app.service('todo-items') as unknown as ResourceService
    const fits = { groupBy: [{ field: 'description' }], count: ['id'] }
    const params = { query: { filter: { id: { lte: firstId + 499 } } }, queryModel: true }
    let answered: any
    const afterRefusal = await env.server.recordStatements(async () => {
      answered = await service.aggregate(fits, { ...params, groupRefusals: { count: 1 } })
    })
    assert.equal(answered.length, 500)
    assert.equal(afterRefusal.length, 2, 'the count of distinct keys, then the grouping')
    assert.match(afterRefusal[0], /select distinct/i)

    const alone = await env.server.recordStatements(async () => {
      const response = await graphql(
        env.server,
        `{ todoItemAggregate(filter: {id: {lte: ${firstId + 499}}}) { groupBy { description } count { id } } }`
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.equal(response.data.todoItemAggregate.length, 500)
    })
    assert.equal(alone.length, 1, 'a request with no refusal counts nothing first')
  })

  it("keeps serving another user's read while the refused request runs", async function () {
    this.timeout(60000)
    const contention = await probeDuring(
      env.server,
      () => graphql(env.server, `{ ${aliased(ALIASES, byDescription)} }`),
      () => env.server.http('GET', `/todo-items/${firstId}`)
    )
    assertServedMeanwhile(contention)
    assert.ok(contention.during < 1000, `the GET took ${Math.round(contention.during)} ms`)
    assert.deepEqual(codes(contention.result), ['BAD_USER_INPUT'])
  })
})
