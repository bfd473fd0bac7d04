import assert from 'node:assert/strict'
import { Conflict, Forbidden, GeneralError, NotAuthenticated, Unavailable } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems, seedSubTasks } from './support/seed'
import { codes, graphql } from './support/graphql'

/** Errors a test asks the TodoItem service to throw, through the `x-fail` header. */
const FAILURES: Record<string, () => Error> = {
  forbidden: () => new Forbidden('Not yours'),
  unauthenticated: () => new NotAuthenticated('Who are you?'),
  unavailable: () => new Unavailable('Try later'),
  conflict: () => new Conflict('Busy'),
  general: () => new GeneralError('secret details of a GeneralError'),
  plain: () => new Error('secret details of a plain Error')
}

function failOnHeader(context: HookContext) {
  const failure = context.params.headers?.['x-fail']
  if (typeof failure === 'string' && FAILURES[failure]) throw FAILURES[failure]()
}

async function withConsoleErrors<T>(work: () => Promise<T>): Promise<{ result: T; logged: unknown[][] }> {
  const original = console.error
  const logged: unknown[][] = []
  console.error = (...args: unknown[]) => logged.push(args)
  try {
    return { result: await work(), logged }
  } finally {
    console.error = original
  }
}

forEachDatabase('GraphQL: errors, transport and service params', (env) => {
  const seen: Array<{ provider?: string; user?: unknown; method: string }> = []

  before(async () => {
    await clearTables(env.server.db)
    const [id] = await seedTodoItems(env.server.db, [{ title: 'One' }, { title: 'Two' }])
    await seedSubTasks(
      env.server.db,
      [1, 2, 3].map((n) => ({ todoItemId: id, title: `s${n}` }))
    )
    const record = (context: HookContext) => {
      seen.push({
        provider: context.params.provider,
        user: context.params.headers?.['user-name'],
        method: context.method
      })
    }
    env.server.app.service('todo-items').hooks({ before: { find: [failOnHeader], get: [failOnHeader] } })
    env.server.app.service('sub-tasks').hooks({ before: { find: [record], get: [record] } })
  })

  it('calls the services with provider graphql and the request headers', async () => {
    seen.length = 0
    const response = await graphql(
      env.server,
      '{ subTasks { edges { node { title } } } todoItems { edges { node { subTasks { edges { cursor } } } } } }',
      undefined,
      { 'user-name': 'ann' }
    )
    assert.equal(response.errors, undefined)
    assert.deepEqual(seen, [
      { provider: 'graphql', user: 'ann', method: 'find' },
      { provider: 'graphql', user: 'ann', method: 'find' }
    ])
  })

  it('maps Feathers errors to extensions.code, keeping client error messages', async () => {
    const expected: Array<[string, string, string]> = [
      ['forbidden', 'FORBIDDEN', 'Not yours'],
      ['unauthenticated', 'UNAUTHENTICATED', 'Who are you?'],
      ['unavailable', 'SERVICE_UNAVAILABLE', 'Try later'],
      ['conflict', 'CONFLICT', 'Busy']
    ]
    for (const [failure, code, message] of expected) {
      const response = await graphql(env.server, '{ todoItems { edges { cursor } } }', undefined, {
        'x-fail': failure
      })
      assert.deepEqual(codes(response), [code], failure)
      assert.equal(response.errors![0].message, message)
      assert.deepEqual(response.errors![0].path, ['todoItems'])
      assert.equal(response.data, null)
      const single = await graphql(env.server, '{ todoItem(id: "1") { id } }', undefined, {
        'x-fail': failure
      })
      assert.deepEqual(codes(single), [code], failure)
      assert.deepEqual(single.data, { todoItem: null })
    }
  })

  it('hides unexpected errors behind INTERNAL_SERVER_ERROR and logs them', async () => {
    for (const failure of ['general', 'plain']) {
      const { result, logged } = await withConsoleErrors(() =>
        graphql(env.server, '{ todoItems { edges { cursor } } }', undefined, { 'x-fail': failure })
      )
      assert.deepEqual(codes(result), ['INTERNAL_SERVER_ERROR'])
      assert.equal(result.errors![0].message, 'Internal server error')
      assert.doesNotMatch(JSON.stringify(result), /secret/)
      assert.equal(logged.length, 1)
      assert.match(String(logged[0][0]), /secret details/)
    }
  })

  it('reports the failure of a batch once, not once per parent', async () => {
    const response = await graphql(
      env.server,
      '{ subTasks { edges { node { title todoItem { id } } } } }',
      undefined,
      {
        'x-fail': 'forbidden'
      }
    )
    assert.deepEqual(codes(response), ['FORBIDDEN'])
    assert.deepEqual(
      response.data.subTasks.edges.map((edge: any) => edge.node),
      ['s1', 's2', 's3'].map((title) => ({ title, todoItem: null }))
    )
  })

  it('answers invalid documents and variables with codes, never an internal error', async () => {
    const parse = await graphql(env.server, '{ todoItems { edges { cursor }')
    assert.deepEqual(codes(parse), ['GRAPHQL_PARSE_FAILED'])
    const unknownField = await graphql(env.server, '{ todoItems { edges { node { createdBy } } } }')
    assert.deepEqual(codes(unknownField), ['GRAPHQL_VALIDATION_FAILED'])
    assert.match(unknownField.errors![0].message, /Cannot query field "createdBy" on type "TodoItem"/)
    const missingId = await graphql(env.server, '{ todoItem { id } }')
    assert.deepEqual(codes(missingId), ['GRAPHQL_VALIDATION_FAILED'])
    const badVariable = await graphql(env.server, 'query ($id: ID!) { todoItem(id: $id) { id } }', {})
    assert.deepEqual(codes(badVariable), ['BAD_USER_INPUT'])
    const badId = await graphql(env.server, '{ todoItem(id: "abc") { id } }')
    assert.deepEqual(codes(badId), ['BAD_USER_INPUT'])
    assert.deepEqual(badId.errors![0].extensions.errors, [{ field: 'id', message: 'must be an integer' }])
    // TodoItemTag allows only a multi remove, so it has no other many-mutation.
    const mutation = await graphql(
      env.server,
      'mutation { createManyTodoItemTags(input: {todoItemTags: [{todoItemId: "1", tagId: "1"}]}) { id } }'
    )
    assert.deepEqual(codes(mutation), ['GRAPHQL_VALIDATION_FAILED'])
    assert.match(
      mutation.errors![0].message,
      /Cannot query field "createManyTodoItemTags" on type "Mutation"/
    )
    assert.equal(mutation.data, undefined)
    // Subscriptions are served over WebSocket only.
    const subscription = await graphql(env.server, 'subscription { createdTodoItem { id } }')
    assert.match(subscription.errors![0].message, /Subscriptions are not supported/)
    assert.equal(subscription.data, undefined)
  })

  it('serves GET and POST, with the status codes of GraphQL over HTTP', async () => {
    const query = encodeURIComponent(
      'query ($n: Int) { todoItems(paging: {first: $n}) { edges { node { title } } } }'
    )
    const variables = encodeURIComponent(JSON.stringify({ n: 1 }))
    const get = await env.server.http('GET', `/graphql?query=${query}&variables=${variables}`)
    assert.equal(get.status, 200)
    assert.deepEqual(get.body, { data: { todoItems: { edges: [{ node: { title: 'One' } }] } } })

    const invalid = { query: '{ nope }' }
    const legacy = await env.server.http('POST', '/graphql', invalid)
    assert.equal(legacy.status, 200, 'application/json answers 200 even for request errors')
    const modern = await env.server.http('POST', '/graphql', invalid, {
      accept: 'application/graphql-response+json'
    })
    assert.equal(modern.status, 400)
    assert.equal(modern.body.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')

    const noQuery = await env.server.http('POST', '/graphql', {})
    assert.equal(noQuery.status, 400)
    assert.equal(noQuery.body.errors[0].extensions.code, 'BAD_REQUEST')
    const put = await env.server.http('PUT', '/graphql', invalid)
    assert.equal(put.status, 405)
    assert.equal(put.body.errors[0].extensions.code, 'METHOD_NOT_ALLOWED')
    const mutation = encodeURIComponent('mutation { deleteOneTodoItem(input: { id: 1 }) { id } }')
    const mutationOverGet = await env.server.http('GET', `/graphql?query=${mutation}`)
    assert.equal(mutationOverGet.status, 405)
    assert.equal(mutationOverGet.body.errors[0].extensions.code, 'METHOD_NOT_ALLOWED', mutationOverGet.text)
    assert.match(mutationOverGet.body.errors[0].message, /mutations over GET/)
    const form = await env.server.http('POST', '/graphql', 'query={nope}', {
      'content-type': 'application/x-www-form-urlencoded'
    })
    assert.equal(form.status, 415)
    assert.equal((await env.server.http('GET', '/todo-items?limit=1')).status, 200, 'REST is unaffected')
  })
})
