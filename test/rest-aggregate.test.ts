import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { clearTables, seedTodoItems, type TodoSeed } from './support/seed'
import { graphql } from './support/graphql'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'

const hideSecrets = (context: HookContext) =>
  context.params.headers?.['x-user'] ? { title: { notLike: 'secret%' } } : undefined

const app = exampleResourcesApp({
  quietErrors: true,
  resources: [
    { ...todoItemResource, authorize: hideSecrets, aggregate: { maxGroups: 5 } },
    subTaskResource,
    ...tagResources
  ]
})

const ITEMS: TodoSeed[] = [
  { title: 'a1', createdBy: 'ann', priority: 1, created: '2024-10-26T22:30:00.000Z' },
  { title: 'a2', createdBy: 'ann', priority: 3, completed: true, created: '2024-10-27T00:30:00.000Z' },
  { title: 'secret', createdBy: 'ann', priority: 8, created: '2024-10-27T01:30:00.000Z' },
  { title: 'b1', createdBy: 'bob', priority: 2, created: '2024-10-27T23:30:00.000Z' },
  { title: 'b2', createdBy: 'bob', priority: 4, completed: true, created: '2024-10-29T12:00:00.000Z' },
  { title: 'c1', createdBy: 'cid', priority: 5, created: '2024-10-29T13:00:00.000Z' },
  { title: 'n1', createdBy: null, priority: 0, created: '2024-10-29T14:00:00.000Z' }
]

forEachDatabase(
  'REST: GET /todo-items/aggregate',
  (env) => {
    before(async () => {
      await clearTables(env.server.db)
      await seedTodoItems(env.server.db, ITEMS)
    })

    const USER = { 'x-user': 'ann' }
    const get = async (query: string, headers: Record<string, string> = {}) => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await env.server.http('GET', `/todo-items/aggregate?${query}`, undefined, headers)
      })
      assert.equal(response.status, 200, response.text)
      assert.equal(statements, 1, 'one statement per request')
      return response
    }

    it('answers what the GraphQL aggregate answers, with the same having, order, paging and authorization', async () => {
      const rest = await get(
        'groupBy=createdBy&count=id&avg=priority&having=' +
          encodeURIComponent('{"count":{"id":{"gte":2}}}') +
          '&sort=-count.id,createdBy&limit=1&offset=1&totalCount=true',
        USER
      )
      const document = `{ todoItemAggregateGroups(having: {count: {id: {gte: 2}}},
        sorting: [{field: id, aggregate: COUNT, direction: DESC}, {field: createdBy, direction: ASC}], paging: {limit: 1, offset: 1}) {
        nodes { groupBy { createdBy } count { id } avg { priority } } pageInfo { hasNextPage hasPreviousPage } totalCount } }`
      const gql = await graphql(env.server, document, undefined, USER)
      assert.deepEqual(rest.body, gql.data.todoItemAggregateGroups)
      // Visible to the user: ann 2 (a1, a2), bob 2, cid 1, none 1; ties by creator: ann, then bob.
      assert.deepEqual(rest.body, {
        nodes: [{ groupBy: { createdBy: 'bob' }, count: { id: 2 }, avg: { priority: 3 } }],
        pageInfo: { hasNextPage: false, hasPreviousPage: true },
        totalCount: 2
      })
      const everyone = await get(
        'groupBy=createdBy&count=id&having=' + encodeURIComponent('{"count":{"id":{"gte":2}}}')
      )
      assert.deepEqual(everyone.body.nodes, [
        { groupBy: { createdBy: 'ann' }, count: { id: 3 } },
        { groupBy: { createdBy: 'bob' }, count: { id: 2 } }
      ])
    })

    it("filters by the list's equality parameters, counts distinct values, buckets in a zone and fills", async () => {
      const open = await get('completed=false&count=id&countDistinct=completed,priority')
      assert.deepEqual(open.body.nodes, [{ count: { id: 5 }, countDistinct: { completed: 1, priority: 5 } }])
      const days = await get(
        'groupBy=created:DAY&timeZone=Europe/Berlin&fill=true&from=2024-10-26T00:00:00Z&to=2024-10-29T22:00:00Z&count=id',
        USER
      )
      // Berlin: Oct 26 (a1 at 00:30 CEST Oct 27 is Oct 27), Oct 27 (a1, a2; the secret hidden), Oct 28 (b1), Oct 29 (b2, c1, n1).
      assert.deepEqual(
        days.body.nodes.map((node: any) => [node.groupBy.created, node.count.id]),
        [
          ['2024-10-25T22:00:00.000Z', 0],
          ['2024-10-26T22:00:00.000Z', 2],
          ['2024-10-27T23:00:00.000Z', 1],
          ['2024-10-28T23:00:00.000Z', 3]
        ]
      )
    })

    it('answers CSV with a header of groupBy and function columns', async () => {
      const csv = await get(
        'groupBy=completed,createdBy&count=id&max=title&sort=createdBy:NULLS_LAST,completed&format=csv&limit=5&totalCount=true'
      )
      assert.match(csv.headers.get('content-type'), /^text\/csv/)
      assert.match(csv.headers.get('content-disposition'), /todo-items-aggregate\.csv/)
      assert.equal(csv.headers.get('x-total-count'), '6')
      assert.equal(
        csv.text,
        [
          '"groupBy.completed","groupBy.createdBy","count.id","max.title"',
          'false,"ann",2,"secret"',
          'true,"ann",1,"a2"',
          'false,"bob",1,"b1"',
          'true,"bob",1,"b2"',
          'false,"cid",1,"c1"',
          ''
        ].join('\n')
      )
      const accepted = await get('count=id', { accept: 'text/csv' })
      assert.equal(accepted.text, '"count.id"\n7\n')
    })

    it('refuses what it cannot answer with 400s naming the parameter, and too many groups unless paged', async () => {
      const refused = async (query: string, fields: string[]) => {
        const response = await env.server.http('GET', `/todo-items/aggregate?${query}`)
        assert.equal(response.status, 400, response.text)
        assert.deepEqual(
          response.body.errors.map((error: any) => error.field),
          fields,
          query
        )
      }
      await refused('count=id&having=%7Bnope', ['having'])
      await refused('count=id&query=milk', ['query'])
      await refused('count=id&sort=title', ['sort.0'])
      await refused('count=id&timeZone=Europe/Berlin', ['timeZone'])
      await refused('count=id&limit=6', ['limit'])
      await refused('count=id&priority=high', ['priority'])
      await refused('sum=title', ['sum.0'])
      await refused('groupBy=title&count=id', ['groupBy'])
      await refused('groupBy=created:DAY:Europe/Berlin&count=id', ['groupBy'])
      // totalCount alone pages from the first group and counts them all, as GraphQL does.
      const counted = await get('groupBy=completed&count=id&totalCount=true')
      assert.equal(counted.body.totalCount, counted.body.nodes.length)
      const paged = await get('groupBy=title&count=id&limit=5')
      assert.equal(paged.body.nodes.length, 5)
      assert.equal(paged.body.pageInfo.hasNextPage, true)
    })

    it('is routed before GET /todo-items/:id, and a record is still read by id', async () => {
      const [id] = (await env.server.db('todo_items').select('id').orderBy('id').limit(1)).map(
        (row) => row.id
      )
      const record = await env.server.http('GET', `/todo-items/${id}`)
      assert.equal(record.status, 200)
      assert.equal(record.body.title, 'a1')
    })

    it('is described in the OpenAPI document', async () => {
      const document = await env.server.http('GET', '/openapi.json')
      const operation = document.body.paths['/todo-items/aggregate']?.get
      assert.ok(operation, 'GET /todo-items/aggregate')
      assert.equal(operation.operationId, 'todoItems.aggregate')
      const names = operation.parameters.map((parameter: any) => parameter.name)
      for (const name of [
        'groupBy',
        'timeZone',
        'fill',
        'count',
        'countDistinct',
        'having',
        'sort',
        'limit',
        'offset',
        'totalCount',
        'format',
        'completed'
      ]) {
        assert.ok(names.includes(name), name)
      }
      assert.ok(operation.responses['200'].content['text/csv'])
    })
  },
  app
)
