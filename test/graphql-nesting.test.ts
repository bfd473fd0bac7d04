import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'

/** An `and` filter `levels` deep around one comparison. */
function nestedFilter(levels: number): unknown {
  let filter: unknown = { id: { eq: 1 } }
  for (let level = 0; level < levels; level++) filter = { and: [filter] }
  return filter
}

function nestedLiteral(levels: number) {
  return `${'{and: ['.repeat(levels)}{id: {eq: 1}}${']}'.repeat(levels)}`
}

forEachDatabase('Limits: nesting that would exhaust the stack', (env) => {
  const post = (body: unknown) => env.server.http('POST', '/graphql', body)

  it('refuses a document nested past 256 brackets before parsing it (2,400 levels fit in 10,000 tokens)', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await post({ query: `{ todoItems(filter: ${nestedLiteral(2400)}) { totalCount } }` })
    })
    assert.equal(statements, 0)
    assert.deepEqual(
      response.body.errors.map((error: any) => error.extensions.code),
      ['QUERY_TOO_DEEP']
    )
    assert.match(response.body.errors[0].message, /more than 256 levels deep/)
    // Brackets inside strings and comments are not nesting.
    const quoted = await post({
      query: `{ todoItems(filter: {title: {eq: "${'{['.repeat(300)}"}}) { totalCount } } # ${'('.repeat(300)}`
    })
    assert.equal(quoted.body.errors, undefined, JSON.stringify(quoted.body.errors))
    // Below the bound, the filter's own depth limit answers, naming the field.
    const deep = await post({ query: `{ todoItems(filter: ${nestedLiteral(100)}) { totalCount } }` })
    assert.equal(deep.body.errors[0].extensions.code, 'BAD_USER_INPUT')
    assert.match(deep.body.errors[0].message, /filters may nest at most 16 levels/)
  })

  it('refuses variables nested past 256 levels before coercing them', async () => {
    const query = 'query($f: TodoItemFilter!) { todoItems(filter: $f) { totalCount } }'
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await post({ query, variables: { f: nestedFilter(1000) } })
    })
    assert.equal(statements, 0)
    assert.deepEqual(
      response.body.errors.map((error: any) => error.extensions.code),
      ['BAD_USER_INPUT']
    )
    assert.match(response.body.errors[0].message, /The variables nest more than 256 levels deep/)
    const allowed = await post({ query, variables: { f: nestedFilter(10) } })
    assert.equal(allowed.body.errors, undefined, JSON.stringify(allowed.body.errors))
  })
})
