import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'
import { parseCsv } from './support/csv'

/** The sub tasks each of the 12 items gets: 0 to 4, so that counts tie and sort, filter and group. */
const SUB_TASKS = [3, 0, 1, 4, 0, 2, 3, 1, 0, 4, 2, 3]

forEachDatabase('SQL-computed fields (TodoItem.subTasksCount)', (env) => {
  let ids: number[] = []
  /** subTasksCount per item id, from a plain query of its own (a LEFT JOIN and GROUP BY, not the expression). */
  let expected = new Map<number, number>()

  before(async () => {
    const { db } = env.server
    await clearTables(db)
    ids = await seedTodoItems(
      db,
      SUB_TASKS.map((_, index) => ({ title: `item ${String(index).padStart(2, '0')}`, priority: index % 3 }))
    )
    const rows = ids.flatMap((id, index) =>
      Array.from({ length: SUB_TASKS[index] }, (_, n) => ({
        title: `sub ${n}`,
        completed: false,
        created: new Date(),
        updated: new Date(),
        todoItemId: id
      }))
    )
    await db('sub_tasks').insert(rows)
    const counted = await db('todo_items')
      .leftJoin('sub_tasks', 'sub_tasks.todoItemId', 'todo_items.id')
      .groupBy('todo_items.id')
      .select('todo_items.id')
      .count({ n: 'sub_tasks.id' })
    expected = new Map(counted.map((row: Record<string, unknown>) => [Number(row.id), Number(row.n)]))
  })

  const countOf = (id: unknown) => expected.get(Number(id))!

  it('is read in REST records, single and listed, and in the CSV export', async () => {
    const one = await env.server.http('GET', `/todo-items/${ids[3]}`)
    assert.equal(one.status, 200)
    assert.equal(one.body.subTasksCount, countOf(ids[3]))
    const list = await env.server.http('GET', '/todo-items?limit=50')
    assert.deepEqual(
      list.body.nodes.map((node: any) => [node.id, node.subTasksCount]),
      ids.map((id) => [id, countOf(id)])
    )
    const csv = parseCsv((await env.server.http('GET', '/todo-items/export')).text)
    assert.ok(csv.header.includes('subTasksCount'), 'a CSV column')
    assert.deepEqual(
      csv.records.map((record) => Number(record.subTasksCount)),
      ids.map(countOf)
    )
  })

  it('filters REST lists by equality', async () => {
    const response = await env.server.http('GET', '/todo-items?subTasksCount=3&limit=50')
    assert.equal(response.status, 200)
    assert.deepEqual(
      response.body.nodes.map((node: any) => node.id),
      ids.filter((id) => countOf(id) === 3)
    )
    assert.equal(response.body.totalCount, ids.filter((id) => countOf(id) === 3).length)
  })

  it('is selected, filtered and sorted in GraphQL like a column', async () => {
    const response = await graphql(
      env.server,
      `
        {
          todoItems(
            paging: { first: 50 }
            filter: {
              subTasksCount: { gte: 1, lt: 4 }
              or: [{ priority: { eq: 0 } }, { subTasksCount: { eq: 3 } }]
            }
            sorting: [{ field: subTasksCount, direction: DESC }]
          ) {
            edges {
              node {
                id
                subTasksCount
              }
            }
          }
        }
      `
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const wanted = ids
      .map((id, index) => ({ id, count: countOf(id), priority: index % 3 }))
      .filter((item) => item.count >= 1 && item.count < 4 && (item.priority === 0 || item.count === 3))
      .sort((a, b) => b.count - a.count || a.id - b.id)
    assert.deepEqual(
      response.data.todoItems.edges.map((edge: any) => [Number(edge.node.id), edge.node.subTasksCount]),
      wanted.map((item) => [item.id, item.count])
    )
  })

  it('is aggregated: count, sum, avg, min, max and groupBy', async () => {
    const response = await graphql(
      env.server,
      `
        {
          all: todoItemAggregate {
            count {
              subTasksCount
            }
            sum {
              subTasksCount
            }
            avg {
              subTasksCount
            }
            min {
              subTasksCount
            }
            max {
              subTasksCount
            }
          }
          groups: todoItemAggregate(filter: { subTasksCount: { gt: 0 } }) {
            groupBy {
              subTasksCount
            }
            count {
              id
            }
          }
        }
      `
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const counts = ids.map(countOf)
    const sum = counts.reduce((a, b) => a + b, 0)
    assert.deepEqual(response.data.all, [
      {
        count: { subTasksCount: counts.length },
        sum: { subTasksCount: sum },
        avg: { subTasksCount: sum / counts.length },
        min: { subTasksCount: Math.min(...counts) },
        max: { subTasksCount: Math.max(...counts) }
      }
    ])
    const groups = [...new Set(counts.filter((count) => count > 0))].sort((a, b) => a - b)
    assert.deepEqual(
      response.data.groups,
      groups.map((group) => ({
        groupBy: { subTasksCount: group },
        count: { id: counts.filter((count) => count === group).length }
      }))
    )
  })

  it('follows changes to the rows it counts', async () => {
    const id = ids[1]
    const created = await env.server.http('POST', '/sub-tasks', { title: 'new', todoItemId: String(id) })
    assert.equal(created.status, 201)
    assert.equal((await env.server.http('GET', `/todo-items/${id}`)).body.subTasksCount, countOf(id) + 1)
    await env.server.http('DELETE', `/sub-tasks/${created.body.id}`)
    assert.equal((await env.server.http('GET', `/todo-items/${id}`)).body.subTasksCount, countOf(id))
  })

  it('is read-only: writing it is a 400 on REST and GraphQL, and OpenAPI marks it readOnly', async () => {
    const create = await env.server.http('POST', '/todo-items', { title: 'x', subTasksCount: 3 })
    assert.equal(create.status, 400)
    assert.equal(create.body.errors[0].field, 'body.subTasksCount')
    const update = await env.server.http('PATCH', `/todo-items/${ids[0]}`, { subTasksCount: 3 })
    assert.equal(update.status, 400)
    const mutation = await graphql(
      env.server,
      `
        mutation {
          createOneTodoItem(input: { todoItem: { title: "x", subTasksCount: 3 } }) {
            id
          }
        }
      `
    )
    assert.deepEqual(codes(mutation), ['GRAPHQL_VALIDATION_FAILED'])
    assert.match(mutation.errors![0].message, /subTasksCount/)
    const document = (await env.server.http('GET', '/openapi.json')).body
    const record = document.components.schemas.TodoItem
    assert.equal(record.properties.subTasksCount.readOnly, true)
    assert.equal(document.components.schemas.TodoItemCreate.properties.subTasksCount, undefined)
  })

  it('is one statement per page: the expression is part of the page, not a query per record', async () => {
    const query = `{ todoItems(paging: { first: 10 }) { edges { node { id subTasksCount } } } }`
    const statements = await env.server.recordStatements(() => graphql(env.server, query))
    assert.equal(statements.length, 1)
    assert.match(statements[0], /count\(\*\)/i)
  })
})
