import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems, seedSubTasks, type SubTaskSeed } from './support/seed'
import { codes, graphql } from './support/graphql'

const PARENTS = 12

interface Child extends SubTaskSeed {
  id: number
}

/** Parent `p` has `p % 4` sub-tasks, so parents 0, 4 and 8 have none. */
function childrenOf(parents: number[]): SubTaskSeed[] {
  return parents.flatMap((todoItemId, p) =>
    Array.from({ length: p % 4 }, (_, k) => ({
      todoItemId,
      title: `p${String(p).padStart(2, '0')}-s${k}`,
      description: k === 0 ? null : `d${k}`,
      completed: k % 2 === 1,
      created: new Date(Date.UTC(2026, 1, p + 1, 8 + k)).toISOString()
    }))
  )
}

const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0)

forEachDatabase('GraphQL: relation aggregates', (env) => {
  let parents: number[]
  let children: Child[]

  before(async () => {
    await clearTables(env.server.db)
    parents = await seedTodoItems(
      env.server.db,
      Array.from({ length: PARENTS }, (_, p) => ({ title: `parent-${String(p).padStart(2, '0')}` }))
    )
    const seeds = childrenOf(parents)
    const ids = await seedSubTasks(env.server.db, seeds)
    children = seeds.map((seed, index) => ({ ...seed, id: ids[index] }))
  })

  const QUERY = `query ($first: Int) {
    todoItems(paging: {first: $first}) {
      edges { node { id
        subTasksAggregate {
          count { id description completed todoItemId }
          sum { id }
          avg { id }
          min { id title created todoItemId }
          max { title description }
        }
        done: subTasksAggregate(filter: {completed: {is: true}}) { count { id } }
        grouped: subTasksAggregate { groupBy { completed created } count { id } }
      } }
    }
  }`

  it('aggregates each parent’s records, all parents in one statement per distinct request', async () => {
    let response: any
    const statements = await env.server.recordStatements(async () => {
      response = await graphql(env.server, QUERY, { first: PARENTS })
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(
      statements.length,
      4,
      `the page, then one statement per argument set:\n${statements.join('\n')}`
    )

    const nodes = response.data.todoItems.edges.map((edge: any) => edge.node)
    assert.deepEqual(
      nodes.map((node: any) => node.id),
      parents.map(String)
    )
    for (const [p, node] of nodes.entries()) {
      const own = children.filter((child) => child.todoItemId === parents[p])
      const ids = own.map((child) => child.id)
      const described = own.filter((child) => child.description !== null)
      if (own.length === 0) {
        // What an empty set aggregates to: zero counts and nulls, and no groups at all.
        assert.deepEqual(node.subTasksAggregate, [
          {
            count: { id: 0, description: 0, completed: 0, todoItemId: 0 },
            sum: { id: null },
            avg: { id: null },
            min: { id: null, title: null, created: null, todoItemId: null },
            max: { title: null, description: null }
          }
        ])
        assert.deepEqual(node.done, [{ count: { id: 0 } }])
        assert.deepEqual(node.grouped, [])
        continue
      }
      assert.deepEqual(node.subTasksAggregate, [
        {
          count: {
            id: own.length,
            description: described.length,
            completed: own.length,
            todoItemId: own.length
          },
          sum: { id: total(ids) },
          avg: { id: total(ids) / own.length },
          min: {
            id: String(Math.min(...ids)),
            title: own[0].title,
            created: own[0].created,
            todoItemId: String(parents[p])
          },
          max: {
            title: own[own.length - 1].title,
            description: described.length ? described[described.length - 1].description : null
          }
        }
      ])
      assert.deepEqual(node.done, [{ count: { id: own.filter((child) => child.completed).length } }])
      // Relation groupBy dates have no `by`: they group by day.
      const day = own[0].created!.slice(0, 10) + 'T00:00:00.000Z'
      const groups = [false, true]
        .map((completed) => ({
          groupBy: { completed, created: day },
          count: { id: own.filter((child) => child.completed === completed).length }
        }))
        .filter((group) => group.count.id > 0)
      assert.deepEqual(node.grouped, groups)
    }
  })

  it('costs the same number of statements whatever the page size', async () => {
    for (const first of [1, 3, PARENTS]) {
      const statements = await env.server.countStatements(() => graphql(env.server, QUERY, { first }))
      assert.equal(statements, 4, `first: ${first}`)
    }
  })

  it('ANDs the relation filter with the parent, and loads parents asking the same together', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await graphql(
        env.server,
        `
          {
            todoItems(paging: { first: 4 }) {
              edges {
                node {
                  a: subTasksAggregate(
                    filter: { or: [{ title: { like: "%-s2" } }, { description: { is: null } }] }
                  ) {
                    count {
                      id
                    }
                    max {
                      title
                    }
                  }
                  b: subTasksAggregate(
                    filter: { or: [{ title: { like: "%-s2" } }, { description: { is: null } }] }
                  ) {
                    count {
                      id
                    }
                    max {
                      title
                    }
                  }
                }
              }
            }
          }
        `
      )
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(statements, 2, 'identical arguments share one batch')
    const counts = response.data.todoItems.edges.map((edge: any) => [edge.node.a, edge.node.b])
    assert.deepEqual(counts, [
      [[{ count: { id: 0 }, max: { title: null } }], [{ count: { id: 0 }, max: { title: null } }]],
      [[{ count: { id: 1 }, max: { title: 'p01-s0' } }], [{ count: { id: 1 }, max: { title: 'p01-s0' } }]],
      [[{ count: { id: 1 }, max: { title: 'p02-s0' } }], [{ count: { id: 1 }, max: { title: 'p02-s0' } }]],
      [[{ count: { id: 2 }, max: { title: 'p03-s2' } }], [{ count: { id: 2 }, max: { title: 'p03-s2' } }]]
    ])
  })

  it('answers a single parent and a parent reached through a child', async () => {
    const [child] = children
    const response = await graphql(
      env.server,
      `
        query ($parent: ID!, $child: ID!) {
          todoItem(id: $parent) {
            subTasksAggregate {
              count {
                id
              }
            }
          }
          subTask(id: $child) {
            todoItem {
              id
              subTasksAggregate {
                groupBy {
                  todoItemId
                }
                count {
                  title
                }
              }
            }
          }
        }
      `,
      { parent: String(parents[3]), child: String(child.id) }
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.deepEqual(response.data.todoItem.subTasksAggregate, [{ count: { id: 3 } }])
    assert.deepEqual(response.data.subTask.todoItem.subTasksAggregate, [
      { groupBy: { todoItemId: String(child.todoItemId) }, count: { title: 1 } }
    ])
  })

  it('refuses a relation aggregate without aggregate fields or with a bad filter, once per request', async () => {
    const nothing = await graphql(
      env.server,
      '{ todoItems { edges { node { subTasksAggregate { __typename } } } } }'
    )
    assert.deepEqual(codes(nothing), ['BAD_USER_INPUT'])

    const badFilter = await graphql(
      env.server,
      'query ($filter: SubTaskAggregateFilter) { todoItems { edges { node { subTasksAggregate(filter: $filter) { count { id } } } } } }',
      { filter: { id: { in: ['1', 'x'] } } }
    )
    assert.deepEqual(codes(badFilter), ['BAD_USER_INPUT'])
    // The path is within the filter the service gets, the client's ANDed with the parents' ids.
    const [error] = badFilter.errors![0].extensions.errors!
    assert.match(error.field, /(^|\.)id\.in\.1$/)

    const byArgument = await graphql(
      env.server,
      '{ todoItems { edges { node { subTasksAggregate { groupBy { created(fill: {}) } } } } } }'
    )
    assert.deepEqual(codes(byArgument), ['GRAPHQL_VALIDATION_FAILED'])
  })
})
