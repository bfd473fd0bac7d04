import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'

const nested = (levels: number) => {
  let selection = 'id'
  for (let level = 0; level < levels; level++) {
    selection =
      level % 2
        ? `todoItem { id ${selection.replace(/^id /, '')} }`
        : `subTasks { edges { node { id ${selection} } } }`
  }
  return `{ todoItems { edges { node { ${selection} } } } }`
}

forEachDatabase('Limits: what one request may cost', (env) => {
  it('refuses a query nested too deeply before running anything', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await env.server.http('POST', '/graphql', { query: nested(8) })
    })
    assert.equal(statements, 0)
    assert.equal(response.body.errors[0].extensions.code, 'QUERY_TOO_DEEP')
    assert.match(response.body.errors[0].message, /at most 12 are allowed/)
  })

  it('refuses a query whose nested pages multiply beyond the complexity limit', async () => {
    const query = `{ todoItems(paging: {first: 50}) { edges { node { id subTasks(paging: {first: 50}) { edges { node {
      id todoItem { id subTasks(paging: {first: 50}) { edges { node { id title } } } } } } } } } } }`
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await env.server.http('POST', '/graphql', { query })
    })
    assert.equal(response.body.errors[0].extensions.code, 'QUERY_TOO_COMPLEX')
    assert.ok(response.body.errors[0].extensions.cost > 25000)
    assert.equal(statements, 0)
    const variables = await env.server.http('POST', '/graphql', {
      query: `query($p: CursorPaging) { todoItems(paging: $p) { edges { node { subTasks(paging: $p) { edges { node {
        todoItem { subTasks(paging: $p) { edges { node { id } } } } } } } } } } }`,
      variables: { p: { first: 2 } }
    })
    assert.equal(
      variables.body.errors[0].extensions.code,
      'QUERY_TOO_COMPLEX',
      'page sizes in variables count as the largest'
    )
  })

  it('measures fragments once, so a chain of fragments that doubles at each step is refused at once', async () => {
    /** A chain of `steps` fragments, each spreading the previous one twice, and how long its refusal took. */
    const refusal = async (steps: number) => {
      const chain = Array.from({ length: steps }, (_, index) =>
        index === 0
          ? 'fragment F0 on TodoItem { id title }'
          : `fragment F${index} on TodoItem { a: subTasks { edges { node { todoItem { ...F${index - 1} } } } } b: subTasks { edges { node { todoItem { ...F${index - 1} } } } } }`
      )
      const started = performance.now()
      // Bounded, so that a walk gone exponential fails the test rather than hanging it and the server.
      const response = await fetch(`${env.server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `{ todoItems { edges { node { ...F${steps - 1} } } } } ${chain.join(' ')}`
        }),
        signal: AbortSignal.timeout(5000)
      }).then(async (answer) => ({ body: (await answer.json()) as any }))
      assert.ok(['QUERY_TOO_COMPLEX', 'QUERY_TOO_DEEP'].includes(response.body.errors[0].extensions.code))
      return performance.now() - started
    }
    // Walked anew at every spread, this took seconds at 24 steps and doubled with each one; walked within the
    // bounds, the cost grows with the document's length. 22 steps tell the two apart in well under a second.
    const short = Math.min(await refusal(10), await refusal(10))
    const long = await refusal(22)
    assert.ok(long < 10 * short + 200, `22 steps took ${long.toFixed(0)} ms, 10 steps ${short.toFixed(0)} ms`)
  })

  it('counts what an empty page selects once, so first: 0 makes nothing free', async () => {
    const query = `{ todoItems(paging: {first: 0}) { edges { node { id subTasks(paging: {first: 50}) { edges { node {
      id todoItem { id subTasks(paging: {first: 50}) { edges { node { id title description completed created updated
      todoItemId t1: title t2: title t3: title t4: title } } } } } } } } } } }`
    const response = await env.server.http('POST', '/graphql', { query })
    assert.equal(
      response.body.errors?.[0]?.extensions.code,
      'QUERY_TOO_COMPLEX',
      JSON.stringify(response.body.errors)
    )
  })

  it('lets an ordinary nested page through', async () => {
    const query = `{ todoItems(paging: {first: 25}) { edges { node { id title subTasks { edges { node { id title todoItem { id } } } } } } } }`
    const response = await env.server.http('POST', '/graphql', { query })
    assert.equal(response.body.errors, undefined)
  })

  it('refuses a document with too many tokens', async () => {
    const query = `{ todoItems { edges { node { ${'id '.repeat(12000)} } } } }`
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await env.server.http('POST', '/graphql', { query })
    })
    assert.equal(statements, 0)
    assert.equal(response.body.errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
    assert.match(response.body.errors[0].message, /tokens/)
  })

  it('refuses bodies over the parser limit with 413, in the shape of the endpoint', async () => {
    const huge = JSON.stringify({ title: 'x'.repeat(2 * 1024 * 1024) })
    const rest = await env.server.http('POST', '/todo-items', huge)
    assert.equal(rest.status, 413)
    assert.equal(rest.body.name, 'PayloadTooLarge')
    const graphql = await env.server.http(
      'POST',
      '/graphql',
      JSON.stringify({ query: '{ todoItems { totalCount } }', padding: 'x'.repeat(2 * 1024 * 1024) })
    )
    assert.equal(graphql.status, 413)
    assert.equal(graphql.body.errors[0].extensions.code, 'PAYLOAD_TOO_LARGE')
  })
})

/** The limits are options of the plugin. */
const tightApp = exampleResourcesApp({
  quietErrors: true,
  bodyParser: { jsonLimit: '1kb' },
  graphql: { limits: { maxDepth: 3, maxComplexity: 100, maxTokens: 50 } }
})

forEachDatabase(
  'Limits: configured',
  (env) => {
    /** The answer to `query`, and how many SQL statements it caused. */
    const measured = async (query: string) => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await env.server.http('POST', '/graphql', { query })
      })
      return {
        errors: response.body.errors as Array<{ message: string; extensions: any }> | undefined,
        statements
      }
    }

    it('applies the configured depth, complexity and token limits before any SQL', async () => {
      const deep = await measured('{ todoItems { edges { node { subTasks { edges { node { id } } } } } } }')
      assert.equal(deep.errors?.[0].extensions.code, 'QUERY_TOO_DEEP')
      assert.match(deep.errors![0].message, /at most 3 are allowed/)
      assert.equal(deep.statements, 0)
      // Within the depth of 3 and far below the default cost of 25,000: two pages of 50 cost 102.
      const costly = await measured(
        '{ a: todoItems(paging: {first: 50}) { totalCount } b: todoItems(paging: {first: 50}) { totalCount } }'
      )
      assert.equal(costly.errors?.[0].extensions.code, 'QUERY_TOO_COMPLEX', JSON.stringify(costly.errors))
      assert.equal(costly.errors![0].extensions.maxComplexity, 100)
      assert.equal(costly.statements, 0)
      // 52 tokens, far below the default of 10,000.
      const wordy = await measured(`{ ${'t: __typename '.repeat(17)} }`)
      assert.equal(wordy.errors?.[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
      assert.match(wordy.errors![0].message, /tokens/)
      assert.equal(wordy.statements, 0)
      const shallow = await measured('{ todoItems { totalCount } }')
      assert.equal(shallow.errors, undefined)
      assert.ok(shallow.statements > 0, 'a query within the limits runs')
    })

    it('applies the configured body limit', async () => {
      const body = await env.server.http('POST', '/todo-items', { title: 'x'.repeat(2000) })
      assert.equal(body.status, 413)
    })
  },
  tightApp
)

forEachDatabase('Limits: introspection', (env) => {
  it("lets graphql-js' standard introspection query through, whatever its depth", async () => {
    const { getIntrospectionQuery } = await import('graphql')
    const response = await env.server.http('POST', '/graphql', { query: getIntrospectionQuery() })
    assert.equal(response.body.errors, undefined)
    assert.ok(response.body.data.__schema.types.length > 10)
  })
})
