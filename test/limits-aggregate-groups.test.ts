import assert from 'node:assert/strict'
import type { ResourceService } from '../src'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { clearTables, numberedItems, seedTodoItems, seedSubTasks } from './support/seed'
import { codes, graphql } from './support/graphql'
import { aliased, assertServedMeanwhile, probeDuring } from './support/contention'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'

const MAX_GROUPS = 20

const limitedApp = exampleResourcesApp({
  quietErrors: true,
  resources: [
    { ...todoItemResource, aggregate: { maxGroups: MAX_GROUPS } },
    { ...subTaskResource, aggregate: { maxGroups: MAX_GROUPS } },
    ...tagResources
  ]
})

forEachDatabase(
  'Limits: groups of one aggregate (aggregate.maxGroups)',
  (env) => {
    let parents: number[] = []

    before(async () => {
      await clearTables(env.server.db)
      // One more record than groups allowed, each with a title and two sub-tasks of its own.
      parents = await seedTodoItems(
        env.server.db,
        Array.from({ length: MAX_GROUPS + 1 }, (_, index) => ({
          title: `t${index}`,
          priority: index < MAX_GROUPS ? 1 : 2
        }))
      )
      await seedSubTasks(
        env.server.db,
        parents.flatMap((todoItemId, index) => [0, 1].map((k) => ({ todoItemId, title: `s${index}-${k}` })))
      )
    })

    it('answers up to maxGroups groups, refuses more with a 400 naming groupBy, reads one past the limit', async () => {
      const within = await graphql(
        env.server,
        '{ todoItemAggregate(filter: {priority: {eq: 1}}) { groupBy { title } count { id } } }'
      )
      assert.equal(within.errors, undefined, JSON.stringify(within.errors))
      assert.equal(within.data.todoItemAggregate.length, MAX_GROUPS)

      let beyond: any
      const statements = await env.server.recordStatements(async () => {
        beyond = await graphql(env.server, '{ todoItemAggregate { groupBy { title } count { id } } }')
      })
      assert.deepEqual(codes(beyond), ['BAD_USER_INPUT'])
      assert.equal(beyond.errors[0].extensions.errors[0].field, 'groupBy')
      assert.match(beyond.errors[0].message, new RegExp(`more than ${MAX_GROUPS} groups`))
      assert.equal(beyond.data, null)
      assert.equal(statements.length, 1)
      assert.match(statements[0], /\blimit\b/i, 'the statement reads at most one group past the limit')
    })

    it("enforces it in the service's aggregate method, which hooks and other transports call", async () => {
      const service = env.server.app.service('todo-items') as unknown as ResourceService
      const byTitle = service.aggregate({ groupBy: [{ field: 'title' }], count: ['id'] })
      await assert.rejects(byTitle, (error: any) => {
        assert.equal(error.code, 400)
        assert.equal(error.name, 'BadRequest')
        assert.equal(error.errors[0].field, 'groupBy')
        return true
      })
      const grouped = await service.aggregate({ groupBy: [{ field: 'priority' }], count: ['id'] })
      assert.deepEqual(grouped, [
        { groupBy: { priority: 1 }, count: { id: MAX_GROUPS } },
        { groupBy: { priority: 2 }, count: { id: 1 } }
      ])
    })

    it('bounds relation aggregates by the groups of all the parents loaded in one statement', async () => {
      const query = (selection: string) => `{ todoItems(paging: {first: ${MAX_GROUPS + 1}}) {
        edges { node { id subTasksAggregate { ${selection} } } } } }`
      const grouped = await graphql(env.server, query('groupBy { title } count { id }'))
      assert.deepEqual([...new Set(codes(grouped))], ['BAD_USER_INPUT'])
      assert.equal(grouped.errors![0].extensions.errors![0].field, 'groupBy')
      assert.match(grouped.errors![0].message, /groups of all the parents together/)

      // One entry per parent: parents go to the database in batches of at most maxGroups, whose groups fit.
      let counted: any
      const statements = await env.server.countStatements(async () => {
        counted = await graphql(env.server, query('count { id }'))
      })
      assert.equal(counted.errors, undefined, JSON.stringify(counted.errors))
      const counts = counted.data.todoItems.edges.map((edge: any) => edge.node.subTasksAggregate[0].count.id)
      assert.deepEqual(counts, Array(MAX_GROUPS + 1).fill(2))
      assert.equal(statements, 3, 'the page, then two batches of parents')
    })
  },
  limitedApp
)

forEachDatabase('Limits: groups of every aggregate of a request', (env) => {
  const everyRecord = 'todoItemAggregate { groupBy { id title description } }'

  it('counts the groups each alias may answer in the cost and refuses too many before running anything', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await graphql(env.server, `{ ${aliased(7, everyRecord)} }`)
    })
    assert.deepEqual(codes(response), ['QUERY_TOO_COMPLEX'])
    assert.match(response.errors[0].message, /groups/)
    assert.equal(statements, 0)
    const one = await graphql(env.server, `{ ${everyRecord} }`)
    assert.equal(one.errors, undefined, JSON.stringify(one.errors))
  })

  it('counts a paged aggregate at its page size per alias, a page size in a variable at maxGroups', async () => {
    const paged = 'todoItemAggregate(paging: {limit: 10}) { groupBy { id title description } }'
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await graphql(env.server, `{ ${aliased(7, paged)} }`)
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(statements, 7)
    const variable = 'todoItemAggregate(paging: {limit: $limit}) { groupBy { id title description } }'
    const refused = await graphql(env.server, `query ($limit: Int) { ${aliased(7, variable)} }`, {
      limit: 10
    })
    assert.deepEqual(codes(refused), ['QUERY_TOO_COMPLEX'])
  })

  it("keeps serving another user's request while one asks for every record as a group, sixty times", async function () {
    this.timeout(60000)
    await clearTables(env.server.db)
    const ids = await seedTodoItems(env.server.db, numberedItems(3000))
    // Before the limit, the 180,000 groups of this request held the GET for 1.8 to 4.8 s.
    const contention = await probeDuring(
      env.server,
      () => graphql(env.server, `{ ${aliased(60, everyRecord)} }`),
      () => env.server.http('GET', `/todo-items/${ids[0]}`)
    )
    assertServedMeanwhile(contention)
    assert.deepEqual(codes(contention.result), ['QUERY_TOO_COMPLEX'])
  })
})
