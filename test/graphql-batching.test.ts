import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedSubTasks, seedTodoItems } from './support/seed'
import { exampleResourcesApp } from './support/example-resources-app'
import type { TestServer } from './support/server'

/** Posts a batch (a JSON array of operations) and answers status and body. */
async function batch(server: TestServer, operations: unknown) {
  const response = await server.http('POST', '/graphql', operations)
  return { status: response.status, body: response.body as any }
}

const subTasksOf = (parent: number) =>
  `{ subTasks(filter: { todoItemId: { eq: "${parent}" } }) { edges { node { title todoItem { title } } } } }`

forEachDatabase(
  'GraphQL: batched operations',
  (env) => {
    let parents: number[]

    before(async function () {
      this.timeout(60000)
      await clearTables(env.server.db)
      parents = await seedTodoItems(env.server.db, [{ title: 'first' }, { title: 'second' }])
      await seedSubTasks(env.server.db, [
        { todoItemId: parents[0], title: 'a' },
        { todoItemId: parents[0], title: 'b' },
        { todoItemId: parents[1], title: 'c' }
      ])
    })

    it('answers an array of operations with their results in the same order, each with its own errors', async () => {
      const { status, body } = await batch(env.server, [
        { query: '{ todoItems(sorting: [{ field: title, direction: ASC }]) { edges { node { title } } } }' },
        { query: 'query One($id: ID!) { todoItem(id: $id) { title } }', variables: { id: parents[1] } },
        { query: '{ nope }' },
        {
          query: 'query A { todoItems { totalCount } } query B { todoItem(id: 1) { title } }',
          operationName: 'A'
        },
        { variables: {} }
      ])
      assert.equal(status, 200)
      assert.equal(body.length, 5)
      assert.deepEqual(
        body[0].data.todoItems.edges.map((edge: any) => edge.node.title),
        ['first', 'second']
      )
      assert.deepEqual(body[1], { data: { todoItem: { title: 'second' } } })
      assert.equal(body[2].data, undefined, JSON.stringify(body[2]))
      assert.equal(body[2].errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
      assert.deepEqual(body[3], { data: { todoItems: { totalCount: 2 } } })
      assert.equal(body[4].errors[0].extensions.code, 'BAD_REQUEST')
    })

    it('reads a related record two operations ask for once: one relation loader per batch', async () => {
      // Alone, each operation runs 2 statements (the sub-tasks, then their parent).
      let response: any
      const statements = await env.server.recordStatements(async () => {
        response = await batch(env.server, [
          { query: subTasksOf(parents[0]) },
          { query: subTasksOf(parents[0]) }
        ])
      })
      assert.equal(response.status, 200)
      for (const result of response.body) {
        assert.equal(result.errors, undefined, JSON.stringify(result.errors))
        assert.deepEqual(
          result.data.subTasks.edges.map((edge: any) => [edge.node.title, edge.node.todoItem.title]).sort(),
          [
            ['a', 'first'],
            ['b', 'first']
          ]
        )
      }
      assert.equal(statements.length, 3, statements.join('\n'))
    })

    it('runs mutations one after the other in order, and later operations read what they wrote', async () => {
      const rename = (title: string) => ({
        query: `mutation($id: ID!, $t: String!) { updateOneTodoItem(input: { id: $id, update: { title: $t } }) { title } }`,
        variables: { id: parents[0], t: title }
      })
      const { status, body } = await batch(env.server, [
        { query: subTasksOf(parents[0]) },
        rename('renamed once'),
        { query: subTasksOf(parents[0]) },
        rename('renamed twice'),
        { query: `{ todoItem(id: ${parents[0]}) { title } }` }
      ])
      assert.equal(status, 200)
      assert.equal(body[0].data.subTasks.edges[0].node.todoItem.title, 'first')
      assert.equal(body[1].data.updateOneTodoItem.title, 'renamed once')
      assert.equal(body[2].data.subTasks.edges[0].node.todoItem.title, 'renamed once')
      assert.equal(body[3].data.updateOneTodoItem.title, 'renamed twice')
      assert.deepEqual(body[4], { data: { todoItem: { title: 'renamed twice' } } })
      await env.server.db('todo_items').where({ id: parents[0] }).update({ title: 'first' })
    })

    it('refuses a batch over graphql.maxBatchOperations, empty, or holding a subscription, before any SQL', async () => {
      const cases: Array<[unknown[], string]> = [
        [Array(6).fill({ query: '{ todoItems { totalCount } }' }), 'BATCH_TOO_LARGE'],
        [[], 'BAD_REQUEST'],
        [
          [{ query: '{ todoItems { totalCount } }' }, { query: 'subscription { createdTodoItem { id } }' }],
          'BAD_REQUEST'
        ]
      ]
      for (const [operations, code] of cases) {
        let response: any
        const statements = await env.server.countStatements(async () => {
          response = await batch(env.server, operations)
        })
        assert.equal(response.status, 400, JSON.stringify(response.body))
        assert.equal(response.body.errors[0].extensions.code, code)
        assert.equal(statements, 0)
      }
      const { body } = await batch(env.server, Array(6).fill({ query: '{ todoItems { totalCount } }' }))
      assert.equal(body.errors[0].extensions.maxBatchOperations, 5)
      assert.match(body.errors[0].message, /maxBatchOperations/)
    })

    it('holds the cost and statement limits of one operation for the whole batch', async () => {
      // 20 statements each (a root query and its totalCount, 10 times): alone within maxStatements (30), together past it.
      const wide = `{ ${Array.from({ length: 10 }, (_, index) => `a${index}: todoItems { totalCount }`).join(' ')} }`
      const alone = await batch(env.server, [{ query: wide }])
      assert.equal(alone.status, 200)
      assert.equal(alone.body[0].errors, undefined, JSON.stringify(alone.body[0].errors))
      const together = await batch(env.server, [{ query: wide }, { query: wide }])
      assert.equal(together.status, 400)
      assert.equal(together.body.errors[0].extensions.code, 'QUERY_TOO_COMPLEX')
      assert.equal(together.body.errors[0].extensions.maxStatements, 30)
      // A page of 50 records' 40 fields costs about 2,000: alone within maxComplexity (3,000), together past it.
      const costly = `{ todoItems(paging: { first: 50 }) { edges { node { ${Array.from({ length: 38 }, (_, index) => `t${index}: title`).join(' ')} } } } }`
      assert.equal((await batch(env.server, [{ query: costly }])).status, 200)
      const expensive = await batch(env.server, [{ query: costly }, { query: costly }])
      assert.equal(expensive.status, 400)
      assert.equal(expensive.body.errors[0].extensions.code, 'QUERY_TOO_COMPLEX')
      assert.equal(expensive.body.errors[0].extensions.maxComplexity, 3000)
    })

    it("holds maxDocumentBytes for the batch's documents together, before parsing any", async () => {
      // About 530 bytes each: alone within maxDocumentBytes (2,000), five together past it.
      const padded = { query: `{ todoItems { totalCount } } #${'x'.repeat(500)}` }
      const alone = await batch(env.server, [padded])
      assert.deepEqual(alone.body, [{ data: { todoItems: { totalCount: 2 } } }])
      const together = await batch(env.server, Array(5).fill(padded))
      assert.equal(together.status, 400)
      assert.equal(together.body.errors[0].extensions.code, 'QUERY_TOO_LARGE')
      assert.equal(together.body.errors[0].extensions.maxBytes, 2000)
    })

    it('answers GET requests one operation at a time', async () => {
      const query = encodeURIComponent('{ todoItems { totalCount } }')
      const response = await env.server.http('GET', `/graphql?query=${query}`)
      assert.equal(response.status, 200)
      assert.deepEqual(response.body, { data: { todoItems: { totalCount: 2 } } })
    })
  },
  exampleResourcesApp({
    graphql: {
      maxBatchOperations: 5,
      limits: { maxStatements: 30, maxComplexity: 3000, maxDocumentBytes: 2000 }
    }
  })
)

forEachDatabase(
  'GraphQL: batching turned off',
  (env) => {
    it('refuses an array body as a malformed request (400) when graphql.maxBatchOperations is false', async () => {
      const { status, body } = await batch(env.server, [{ query: '{ todoItems { totalCount } }' }])
      assert.equal(status, 400)
      assert.equal(body.errors[0].extensions.code, 'BAD_REQUEST')
    })
  },
  exampleResourcesApp({ graphql: { maxBatchOperations: false } })
)
