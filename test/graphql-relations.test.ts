import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems, seedSubTasks } from './support/seed'
import { codes, cursor, graphql } from './support/graphql'

forEachDatabase('GraphQL: relations', (env) => {
  let parents: number[]

  before(async function () {
    this.timeout(60000)
    await clearTables(env.server.db)
    // 50 parents with 12 sub-tasks each (more than a page), then two without any.
    parents = await seedTodoItems(
      env.server.db,
      Array.from({ length: 52 }, (_, index) => ({ title: `parent-${String(index + 1).padStart(2, '0')}` }))
    )
    await seedSubTasks(
      env.server.db,
      parents.slice(0, 50).flatMap((todoItemId, parent) =>
        Array.from({ length: 12 }, (_, index) => ({
          todoItemId,
          title: `p${String(parent + 1).padStart(2, '0')}-s${String(index + 1).padStart(2, '0')}`,
          completed: index % 3 === 0
        }))
      )
    )
  })

  it('loads a page of 50 parents, each with its own first 10 children and their parent, in 3 statements', async () => {
    const query = `{
      todoItems(paging: {first: 50}) {
        edges { node { id title
          subTasks(paging: {first: 10}) {
            totalCount
            pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
            edges { cursor node { id title todoItemId todoItem { id title } } }
          }
        } }
      }
    }`
    let response: any
    const statements = await env.server.recordStatements(async () => {
      response = await graphql(env.server, query)
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(statements.length, 3, statements.join('\n'))
    const nodes = response.data.todoItems.edges.map((edge: any) => edge.node)
    assert.equal(nodes.length, 50)
    for (const [parent, node] of nodes.entries()) {
      const prefix = `p${String(parent + 1).padStart(2, '0')}`
      const children = node.subTasks.edges.map((edge: any) => edge.node)
      assert.deepEqual(
        children.map((child: any) => child.title),
        Array.from({ length: 10 }, (_, index) => `${prefix}-s${String(index + 1).padStart(2, '0')}`)
      )
      assert.ok(children.every((child: any) => child.todoItemId === node.id && child.todoItem.id === node.id))
      assert.ok(children.every((child: any) => child.todoItem.title === node.title))
      assert.equal(node.subTasks.totalCount, 12)
      assert.deepEqual(node.subTasks.pageInfo, {
        hasNextPage: true,
        hasPreviousPage: false,
        startCursor: cursor(0),
        endCursor: cursor(9)
      })
    }

    // The number of statements does not grow with the page size.
    const small = await env.server.countStatements(() =>
      graphql(env.server, query.replace('first: 50', 'first: 2'))
    )
    assert.equal(small, 3)
  })

  it('pages each parent forward and backward on its own', async () => {
    const response = await graphql(
      env.server,
      `
        query ($after: ConnectionCursor, $before: ConnectionCursor) {
          todoItems(paging: { first: 3 }) {
            edges {
              node {
                next: subTasks(paging: { first: 10, after: $after }) {
                  pageInfo {
                    hasNextPage
                    hasPreviousPage
                  }
                  edges {
                    cursor
                    node {
                      title
                    }
                  }
                }
                back: subTasks(paging: { last: 4, before: $before }) {
                  pageInfo {
                    hasNextPage
                    hasPreviousPage
                  }
                  edges {
                    cursor
                    node {
                      title
                    }
                  }
                }
              }
            }
          }
        }
      `,
      { after: cursor(9), before: cursor(6) }
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    for (const [parent, edge] of response.data.todoItems.edges.entries()) {
      const prefix = `p0${parent + 1}`
      const { next, back } = edge.node
      assert.deepEqual(
        next.edges.map((e: any) => e.node.title),
        [`${prefix}-s11`, `${prefix}-s12`]
      )
      assert.deepEqual(
        next.edges.map((e: any) => e.cursor),
        [cursor(10), cursor(11)]
      )
      assert.deepEqual(next.pageInfo, { hasNextPage: false, hasPreviousPage: true })
      assert.deepEqual(
        back.edges.map((e: any) => e.node.title),
        [3, 4, 5, 6].map((n) => `${prefix}-s0${n}`)
      )
      assert.deepEqual(back.pageInfo, { hasNextPage: true, hasPreviousPage: true })
    }
  })

  it('filters and sorts each parent’s children, keeping different arguments apart', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await graphql(
        env.server,
        `
          {
            todoItems(paging: { first: 2 }) {
              edges {
                node {
                  done: subTasks(
                    filter: { completed: { is: true } }
                    sorting: [{ field: title, direction: DESC }]
                  ) {
                    totalCount
                    edges {
                      node {
                        title
                        completed
                      }
                    }
                  }
                  one: subTasks(paging: { first: 1 }) {
                    edges {
                      node {
                        title
                      }
                    }
                  }
                  two: subTasks(paging: { first: 2 }) {
                    edges {
                      node {
                        title
                      }
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
    assert.equal(statements, 4, 'the root page and one statement per distinct set of arguments')
    const [first, second] = response.data.todoItems.edges.map((edge: any) => edge.node)
    assert.deepEqual(
      first.done.edges.map((e: any) => e.node.title),
      ['p01-s10', 'p01-s07', 'p01-s04', 'p01-s01']
    )
    assert.equal(first.done.totalCount, 4)
    assert.deepEqual(
      second.done.edges.map((e: any) => e.node.title),
      ['p02-s10', 'p02-s07', 'p02-s04', 'p02-s01']
    )
    assert.deepEqual(
      first.one.edges.map((e: any) => e.node.title),
      ['p01-s01']
    )
    assert.deepEqual(
      second.two.edges.map((e: any) => e.node.title),
      ['p02-s01', 'p02-s02']
    )
  })

  it('gives parents without children an empty connection', async () => {
    const response = await graphql(
      env.server,
      `
        query ($ids: [ID!]) {
          todoItems(filter: { id: { in: $ids } }) {
            edges {
              node {
                title
                subTasks {
                  totalCount
                  pageInfo {
                    hasNextPage
                    hasPreviousPage
                    startCursor
                    endCursor
                  }
                  edges {
                    cursor
                  }
                }
              }
            }
          }
        }
      `,
      { ids: parents.slice(49).map(String) }
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const [withChildren, ...without] = response.data.todoItems.edges.map((edge: any) => edge.node)
    assert.equal(withChildren.subTasks.totalCount, 12)
    assert.equal(without.length, 2)
    for (const node of without) {
      assert.deepEqual(node.subTasks, {
        totalCount: 0,
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
        edges: []
      })
    }
  })

  it('loads the one-relation of a page of children in one statement', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await graphql(
        env.server,
        `
          {
            subTasks(paging: { first: 50 }, sorting: [{ field: id, direction: DESC }]) {
              edges {
                node {
                  title
                  todoItemId
                  todoItem {
                    id
                    title
                    subTasks(paging: { first: 1 }) {
                      edges {
                        node {
                          title
                        }
                      }
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
    assert.equal(statements, 3)
    const nodes = response.data.subTasks.edges.map((edge: any) => edge.node)
    assert.equal(nodes.length, 50)
    for (const node of nodes) {
      assert.equal(node.todoItem.id, node.todoItemId)
      assert.equal(node.todoItem.title, `parent-${node.title.slice(1, 3)}`)
      assert.equal(node.todoItem.subTasks.edges[0].node.title, `${node.title.slice(0, 3)}-s01`)
    }
  })

  it('answers the single record queries, with null and NOT_FOUND for a missing one', async () => {
    const [subTask] = await env.server.db('sub_tasks').select('id').orderBy('id').limit(1)
    const response = await graphql(
      env.server,
      `
        query ($item: ID!, $task: ID!) {
          todoItem(id: $item) {
            id
            title
            subTasks(paging: { first: 2 }) {
              edges {
                node {
                  title
                }
              }
            }
          }
          subTask(id: $task) {
            id
            title
            todoItem {
              title
            }
          }
          missing: subTask(id: "999999") {
            id
          }
        }
      `,
      { item: String(parents[1]), task: String(subTask.id) }
    )
    assert.deepEqual(response.data.todoItem, {
      id: String(parents[1]),
      title: 'parent-02',
      subTasks: { edges: [{ node: { title: 'p02-s01' } }, { node: { title: 'p02-s02' } }] }
    })
    assert.deepEqual(response.data.subTask, {
      id: String(subTask.id),
      title: 'p01-s01',
      todoItem: { title: 'parent-01' }
    })
    assert.equal(response.data.missing, null)
    assert.deepEqual(codes(response), ['NOT_FOUND'])
    assert.deepEqual(response.errors![0].path, ['missing'])
  })

  it('reports a bad relation argument as BAD_USER_INPUT', async () => {
    const response = await graphql(
      env.server,
      '{ todoItems(paging: {first: 5}) { edges { node { subTasks(filter: {id: {eq: "x"}}) { edges { cursor } } } } } }'
    )
    assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
    assert.equal(response.data, null)
    const paging = await graphql(
      env.server,
      '{ todoItems(paging: {first: 5}) { edges { node { subTasks(paging: {first: 51}) { edges { cursor } } } } } }'
    )
    assert.deepEqual(codes(paging), ['BAD_USER_INPUT'])
    assert.deepEqual(paging.errors![0].extensions.errors, [
      { field: 'paging.first', message: 'must be between 1 and 50' }
    ])
  })

  it('reads only the columns the selection needs, through fragments, aliases and relations', async () => {
    const query = `
      fragment Child on SubTask { renamed: title todoItem { completed } }
      {
        todoItems(paging: {first: 3}) { edges { node { title ... on TodoItem { subTasks { edges { node { ...Child } } } } } } }
        todoItem(id: "${parents[0]}") { age }
      }`
    let response: any
    const statements = await env.server.recordStatements(async () => {
      response = await graphql(env.server, query)
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const columns = (sql: string) =>
      [...sql.replace(/ from .*/s, '').matchAll(/[`"](\w+)[`"]\s*(,|$| from)/g)]
        .map((match) => match[1])
        .sort()
    const [page, children, parentsOfChildren, single] = [
      statements.find((sql) => /from [`"]todo_items[`"] order by/.test(sql))!,
      statements.find((sql) => sql.includes('ROW_NUMBER'))!,
      // A list of ids: `in (...)`, or on PostgreSQL `= ANY(array)`.
      statements.find((sql) => /[`"]todo_items[`"]\.[`"]id[`"] (in|= ANY)\b/.test(sql))!,
      statements.find((sql) => /[`"]todo_items[`"]\.[`"]id[`"] = (?!ANY)/.test(sql))!
    ]
    assert.deepEqual(columns(page), ['id', 'title'], page)
    assert.match(
      children,
      /select [`"]sub_tasks[`"]\.[`"]id[`"], [`"]sub_tasks[`"]\.[`"]title[`"], [`"]sub_tasks[`"]\.[`"]todoItemId[`"], ROW_NUMBER/
    )
    assert.deepEqual(columns(parentsOfChildren), ['completed', 'id'], parentsOfChildren)
    // A computed field may read any stored field, so asking for one reads them all.
    assert.match(single, /[`"]created[`"]/)
    assert.ok(response.data.todoItem.age > 0)
    const first = response.data.todoItems.edges[0].node
    assert.equal(first.title, 'parent-01')
    assert.deepEqual(first.subTasks.edges[0].node, { renamed: 'p01-s01', todoItem: { completed: false } })
  })

  it('lets a hook add a field to what a GraphQL call reads, for that call only', async () => {
    const seen: string[][] = []
    env.server.app.service('todo-items').hooks({
      before: {
        find: [
          (context: any) => {
            const { query, headers } = context.params
            if (headers?.['x-needs-created-by'])
              context.params.query = { ...query, select: [...query.select, 'createdBy'] }
          }
        ]
      },
      after: {
        find: [
          (context: any) => {
            if (context.params.provider === 'graphql') seen.push(Object.keys(context.result.data[0]).sort())
          }
        ]
      }
    })
    const query = '{ todoItems(paging: {first: 2}) { edges { node { title } } } }'
    const widened = await graphql(env.server, query, undefined, { 'x-needs-created-by': '1' })
    const plain = await graphql(env.server, query)
    assert.equal(widened.errors, undefined, JSON.stringify(widened.errors))
    assert.deepEqual(plain.data, widened.data)
    assert.deepEqual(seen, [
      ['createdBy', 'id', 'title'],
      ['id', 'title']
    ])
  })
})
