import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { clearTables, numberedItems, seedTodoItems, seedSubTasks } from './support/seed'
import { codes, graphql } from './support/graphql'
import { aliased, assertServedMeanwhile, connectionsClaimedDuring, probeDuring } from './support/contention'

/** A filter each row takes a while to match: twenty case-insensitive patterns. */
const SLOW_FILTER = {
  or: Array.from({ length: 20 }, (_, index) => ({ description: { iLike: `%${index}x%` } }))
}

/** Enough records for SLOW_FILTER to take tens of milliseconds a statement. */
async function seedSlowTable(db: Parameters<typeof seedTodoItems>[0]) {
  await clearTables(db)
  return seedTodoItems(db, numberedItems(3000))
}

forEachDatabase('Limits: SQL statements of one request', (env) => {
  it('refuses an operation that could run more than 50 statements before running any', async () => {
    // Each alias runs its page and its count.
    const within = await graphql(env.server, `{ ${aliased(25, 'todoItems { totalCount }')} }`)
    assert.equal(within.errors, undefined, JSON.stringify(within.errors))
    let beyond: any
    const statements = await env.server.countStatements(async () => {
      beyond = await graphql(env.server, `{ ${aliased(26, 'todoItems { totalCount }')} }`)
    })
    assert.deepEqual(codes(beyond), ['QUERY_TOO_COMPLEX'])
    // The count stops once past the limit.
    assert.ok(beyond.errors[0].extensions.statements > 50)
    assert.equal(beyond.errors[0].extensions.maxStatements, 50)
    assert.equal(statements, 0)
  })

  it("keeps serving another user's request while one asks for a hundred slow counts", async function () {
    this.timeout(60000)
    const ids = await seedSlowTable(env.server.db)
    const counts = `query($f: TodoItemFilter) { ${aliased(100, 'todoItems(filter: $f) { totalCount }')} }`
    // Before the limit, this request ran 200 statements and the GET waited behind them for 1.2 to 2.7 s.
    const contention = await probeDuring(
      env.server,
      () => graphql(env.server, counts, { f: SLOW_FILTER }),
      () => env.server.http('GET', `/todo-items/${ids[0]}`)
    )
    assertServedMeanwhile(contention)
    assert.deepEqual(codes(contention.result), ['QUERY_TOO_COMPLEX'])
  })
})

forEachDatabase(
  'Limits: statements counted as they run (maxStatements 3)',
  (env) => {
    before(async () => {
      await clearTables(env.server.db)
      const [first, second] = await seedTodoItems(env.server.db, [{ title: 'one' }, { title: 'two' }])
      await seedSubTasks(env.server.db, [
        { todoItemId: first, title: 'a', completed: true },
        { todoItemId: second, title: 'b' }
      ])
    })

    /** Answers `query` and checks it ran exactly the statements the limit counted for it. */
    async function runsExactly(query: string, expected: number) {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(env.server, query)
      })
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.equal(statements, expected)
    }

    it('counts a root query and every relation once per batch of parents', async () => {
      const nested = '{ todoItems { edges { node { subTasks { edges { node { todoItem { id } } } } } } } }'
      await runsExactly(nested, 3)
      const counted = nested.replace('{ todoItems {', '{ todoItems { totalCount')
      const withCount: any = await graphql(env.server, counted)
      assert.deepEqual(codes(withCount), ['QUERY_TOO_COMPLEX'])
      assert.equal(withCount.errors[0].extensions.statements, 4)
    })

    it('counts aliases of a relation that load the same once, as their dataloader does', async () => {
      const same = 'edges { node { id title } }'
      const twice = `a: subTasks { ${same} } b: subTasks { ${same} }`
      await runsExactly(`{ todoItems { edges { node { ${twice} } } } }`, 2)
      const other: any = await graphql(
        env.server,
        `{ todoItems { edges { node { ${twice} c: subTasks(filter: {completed: {is: true}}) { ${same} }
          d: subTasks { edges { node { id } } } } } } }`
      )
      assert.deepEqual(codes(other), ['QUERY_TOO_COMPLEX'])
      assert.equal(other.errors[0].extensions.statements, 4)
    })
  },
  exampleResourcesApp({ quietErrors: true, graphql: { limits: { maxStatements: 3 } } })
)

forEachDatabase('Limits: connections one request holds at once (maxConcurrentStatements 2)', (env) => {
  const forty = aliased(40, 'todoItemAggregate(filter: $f) { count { id } }')
  const aggregates = `query($f: TodoItemAggregateFilter) { ${forty} }`
  let ids: number[] = []

  before(async function () {
    this.timeout(60000)
    ids = await seedSlowTable(env.server.db)
  })

  it('runs at most two service calls of a request at once, the others waiting in the request', async function () {
    this.timeout(60000)
    let response: any
    const claimed = await connectionsClaimedDuring(env.server, async () => {
      response = await graphql(env.server, aggregates, { f: SLOW_FILTER })
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(response.data.a39[0].count.id, response.data.a0[0].count.id)
    assert.ok(claimed <= 2, `the request held or waited for ${claimed} connections at once`)
  })

  it("keeps serving another user's request while one runs forty slow statements", async function () {
    this.timeout(60000)
    const { during, duration, result } = await probeDuring(
      env.server,
      () => graphql(env.server, aggregates, { f: SLOW_FILTER }),
      () => env.server.http('GET', `/todo-items/${ids[0]}`)
    )
    assert.equal(result.errors, undefined, JSON.stringify(result.errors))
    // Before the limit, the GET queued behind the request's statements and took 75-90% of its time.
    const took = `the GET took ${Math.round(during)} ms of the request's ${Math.round(duration)} ms`
    assert.ok(during < duration / 3, took)
  })
})
