import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedLinks, seedSubTasks, seedTags, seedTodoItems } from './support/seed'
import { codes, cursor, graphql } from './support/graphql'
import { exampleResourcesApp } from './support/example-resources-app'
import { QUERY_SYNTAX_HEADER } from '../src'

const FEATHERS = { [QUERY_SYNTAX_HEADER]: 'feathers' }

/**
 * The example's todo items, sub-tasks and tags: alpha has three open sub-tasks (a join would list it three
 * times) and a completed one, bravo only completed ones, charlie one open, delta none; tags link many to many.
 */
async function seedExample(db: Parameters<typeof clearTables>[0]) {
  await clearTables(db)
  const [alpha, bravo, charlie, delta, echo] = await seedTodoItems(
    db,
    ['alpha', 'bravo', 'charlie', 'delta', 'echo'].map((title) => ({ title, completed: title === 'bravo' }))
  )
  await seedSubTasks(db, [
    { todoItemId: alpha, title: 'a1' },
    { todoItemId: alpha, title: 'a2' },
    { todoItemId: alpha, title: 'a3' },
    { todoItemId: alpha, title: 'a4', completed: true },
    { todoItemId: bravo, title: 'b1', completed: true },
    { todoItemId: bravo, title: 'b2', completed: true },
    { todoItemId: charlie, title: 'c1' },
    { todoItemId: echo, title: 'review', completed: true }
  ])
  const [urgent, home, work] = await seedTags(db, ['urgent', 'home', 'work', 'unused'])
  await seedLinks(db, [
    [alpha, urgent],
    [alpha, home],
    [bravo, home],
    [delta, urgent],
    [echo, work]
  ])
}

const titles = (connection: { edges: Array<{ node: { title?: string; name?: string } }> }) =>
  connection.edges.map((edge) => edge.node.title ?? edge.node.name)

forEachDatabase('Relation filters (GraphQL, REST)', (env) => {
  before(async function () {
    this.timeout(60000)
    await seedExample(env.server.db)
  })

  const todoItems = async (filter: string, paging = '{ first: 10 }') => {
    const response = await graphql(
      env.server,
      `{ todoItems(filter: ${filter}, paging: ${paging}, sorting: [{ field: title, direction: ASC }]) {
          totalCount pageInfo { hasNextPage } edges { node { title } } } }`
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    return response.data.todoItems
  }

  it('a many-relation filter: parents with at least one matching child, once each, with exact pages and counts', async () => {
    const open = '{ subTasks: { completed: { is: false } } }'
    const all = await todoItems(open)
    assert.deepEqual(titles(all), ['alpha', 'charlie'])
    assert.equal(all.totalCount, 2)

    const first = await todoItems(open, '{ first: 1 }')
    assert.deepEqual(titles(first), ['alpha'])
    assert.deepEqual([first.totalCount, first.pageInfo.hasNextPage], [2, true])
    const second = await todoItems(open, `{ first: 1, after: "${cursor(0)}" }`)
    assert.deepEqual(titles(second), ['charlie'])
    assert.deepEqual([second.totalCount, second.pageInfo.hasNextPage], [2, false])

    // Any child at all; and a condition no child meets.
    assert.deepEqual(titles(await todoItems('{ subTasks: {} }')), ['alpha', 'bravo', 'charlie', 'echo'])
    assert.equal((await todoItems('{ subTasks: { title: { eq: "nope" } } }')).totalCount, 0)
  })

  it('a one-relation filter: children whose parent matches', async () => {
    const response = await graphql(
      env.server,
      `
        {
          subTasks(filter: { todoItem: { title: { eq: "alpha" } }, completed: { is: false } }) {
            totalCount
            edges {
              node {
                title
              }
            }
          }
        }
      `
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.deepEqual(titles(response.data.subTasks), ['a1', 'a2', 'a3'])
    assert.equal(response.data.subTasks.totalCount, 3)
  })

  it('many-to-many filters, in both directions', async () => {
    assert.deepEqual(titles(await todoItems('{ tags: { name: { eq: "urgent" } } }')), ['alpha', 'delta'])
    assert.deepEqual(titles(await todoItems('{ tags: { name: { in: ["urgent", "home"] } } }')), [
      'alpha',
      'bravo',
      'delta'
    ])
    const response = await graphql(
      env.server,
      `
        {
          tags(
            filter: { todoItems: { completed: { is: false } } }
            sorting: [{ field: name, direction: ASC }]
          ) {
            totalCount
            edges {
              node {
                name
              }
            }
          }
        }
      `
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.deepEqual(titles(response.data.tags), ['home', 'urgent', 'work'])
    assert.equal(response.data.tags.totalCount, 3)
  })

  it('composes with and/or: one child meeting both conditions, or two children each meeting one', async () => {
    const eitherRelation =
      '{ or: [{ subTasks: { completed: { is: false } } }, { tags: { name: { eq: "work" } } }] }'
    assert.deepEqual(titles(await todoItems(eitherRelation)), ['alpha', 'charlie', 'echo'])
    const sameChild = '{ subTasks: { and: [{ completed: { is: false } }, { completed: { is: true } }] } }'
    assert.equal((await todoItems(sameChild)).totalCount, 0)
    const twoChildren =
      '{ and: [{ subTasks: { completed: { is: false } } }, { subTasks: { completed: { is: true } } }] }'
    assert.deepEqual(titles(await todoItems(twoChildren)), ['alpha'])
    const withField =
      '{ completed: { is: false }, or: [{ tags: { name: { eq: "home" } } }, { subTasks: { title: { eq: "c1" } } }] }'
    assert.deepEqual(titles(await todoItems(withField)), ['alpha', 'charlie'])
  })

  it('nests relation filters three deep; a fourth level is a BAD_USER_INPUT naming it', async () => {
    const nested = '{ subTasks: { todoItem: { tags: { name: { eq: "urgent" } } } } }'
    assert.deepEqual(titles(await todoItems(nested)), ['alpha'])
    const response = await graphql(
      env.server,
      `
        {
          todoItems(
            filter: { subTasks: { todoItem: { subTasks: { todoItem: { title: { eq: "alpha" } } } } } }
          ) {
            totalCount
          }
        }
      `
    )
    assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
    assert.equal(response.errors![0].extensions.errors![0].field, 'subTasks.todoItem.subTasks.todoItem')
    assert.match(response.errors![0].extensions.errors![0].message, /nest at most 3/)
  })

  it('in root and relation aggregate filters', async () => {
    const response = await graphql(
      env.server,
      `
        {
          todoItemAggregate(filter: { subTasks: { completed: { is: false } } }) {
            count {
              id
            }
          }
          byTag: todoItemAggregate(filter: { tags: { name: { eq: "home" } } }) {
            groupBy {
              completed
            }
            count {
              id
            }
          }
          todoItems(
            filter: { title: { in: ["alpha", "bravo"] } }
            sorting: [{ field: title, direction: ASC }]
          ) {
            edges {
              node {
                title
                subTasksAggregate(
                  filter: { completed: { is: true }, todoItem: { tags: { name: { eq: "urgent" } } } }
                ) {
                  count {
                    id
                  }
                }
              }
            }
          }
          tags(filter: { name: { eq: "home" } }) {
            edges {
              node {
                todoItemsAggregate(filter: { subTasks: { completed: { is: false } } }) {
                  count {
                    id
                  }
                }
              }
            }
          }
        }
      `
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.deepEqual(response.data.todoItemAggregate, [{ count: { id: 2 } }])
    assert.deepEqual(response.data.byTag, [
      { groupBy: { completed: false }, count: { id: 1 } },
      { groupBy: { completed: true }, count: { id: 1 } }
    ])
    assert.deepEqual(
      response.data.todoItems.edges.map((edge: any) => edge.node.subTasksAggregate[0].count.id),
      [1, 0]
    )
    assert.deepEqual(response.data.tags.edges[0].node.todoItemsAggregate, [{ count: { id: 1 } }])
  })

  it('REST in Feathers query syntax: ?subTasks[completed]=false, ?tags[name]=urgent', async () => {
    const open = await env.server.http(
      'GET',
      '/todo-items?subTasks[completed]=false&$sort[title]=1',
      undefined,
      FEATHERS
    )
    assert.equal(open.status, 200, open.text)
    assert.equal(open.body.total, 2)
    assert.deepEqual(
      open.body.data.map((item: any) => item.title),
      ['alpha', 'charlie']
    )
    const tagged = await env.server.http(
      'GET',
      '/todo-items?tags[name]=urgent&$sort[title]=1',
      undefined,
      FEATHERS
    )
    assert.deepEqual(
      tagged.body.data.map((item: any) => item.title),
      ['alpha', 'delta']
    )
    const orQuery = '$or[0][subTasks][title]=c1&$or[1][tags][name][$in][]=work&$sort[title]=1'
    const either = await env.server.http('GET', `/todo-items?${orQuery}`, undefined, FEATHERS)
    assert.deepEqual(
      either.body.data.map((item: any) => item.title),
      ['charlie', 'echo']
    )
    const children = await env.server.http('GET', '/sub-tasks?todoItem[title]=charlie', undefined, FEATHERS)
    assert.deepEqual(
      children.body.data.map((item: any) => item.title),
      ['c1']
    )

    // Internal callers speak it too.
    const service = env.server.app.service('tags') as any
    const tags = await service.find({ query: { todoItems: { title: 'echo' } }, paginate: false })
    assert.deepEqual(
      tags.map((tag: any) => tag.name),
      ['work']
    )

    const unknown = await env.server.http('GET', '/todo-items?subTasks[nope]=1', undefined, FEATHERS)
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.errors[0].field, 'subTasks.nope')
    const notAQuery = await env.server.http('GET', '/todo-items?tags=urgent', undefined, FEATHERS)
    assert.equal(notAQuery.status, 400)
    assert.equal(notAQuery.body.errors[0].field, 'tags')
  })

  it('the spec REST list has no relation parameters: a 400, not ignored', async () => {
    const response = await env.server.http('GET', '/todo-items?subTasks=1')
    assert.equal(response.status, 400)
  })
})

forEachDatabase(
  'Relation filters: limits',
  (env) => {
    before(async function () {
      this.timeout(60000)
      await seedExample(env.server.db)
    })

    it('counts a relation filter literal in the operation cost, each as a connection of the default page', async () => {
      const query = (filters: string[]) =>
        `{ todoItems(paging: { first: 1 }, filter: { and: [${filters.join(', ')}] }) { edges { node { id } } } }`
      const filter = '{ subTasks: { completed: { is: false } } }'
      const two = await graphql(env.server, query([filter, filter]))
      assert.equal(two.errors, undefined, JSON.stringify(two.errors))
      const three = await graphql(env.server, query([filter, filter, filter]))
      assert.deepEqual(codes(three), ['QUERY_TOO_COMPLEX'])
    })

    it('bounds the relation filters of one filter (maxRelationFilters), variables included', async () => {
      const response = await graphql(
        env.server,
        'query ($filter: TodoItemFilter!) { todoItems(filter: $filter) { totalCount } }',
        { filter: { or: [1, 2, 3].map((index) => ({ subTasks: { title: { eq: `x${index}` } } })) } }
      )
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
      assert.match(response.errors![0].extensions.errors![0].message, /at most 2 relation filters/)
    })
  },
  exampleResourcesApp({ graphql: { limits: { maxComplexity: 30 } }, limits: { maxRelationFilters: 2 } })
)
