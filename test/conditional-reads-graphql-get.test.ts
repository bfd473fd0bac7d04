import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'

const BY_ID = 'query Item($id: ID!) { todoItem(id: $id) { title } }'

/** A GraphQL GET of `query` with its variables in the query string, as GraphQL over HTTP has it. */
const graphqlGet = (query: string, variables?: string) =>
  `/graphql?query=${encodeURIComponent(query)}` +
  (variables === undefined ? '' : `&variables=${encodeURIComponent(variables)}`)

forEachDatabase('Conditional reads: GraphQL GET with variables, errors and HEAD', (env) => {
  let id: number
  before(async () => {
    await clearTables(env.server.db)
    ;[id] = await seedTodoItems(env.server.db, [{ title: 'alpha' }])
  })

  const request = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const response = await fetch(env.server.baseUrl + path, {
      method,
      headers: { accept: 'application/json', ...headers }
    })
    return { status: response.status, etag: response.headers.get('etag'), text: await response.text() }
  }

  it('tags a GET per variables and answers its own tag with a 304, not the tag of other variables', async () => {
    const path = graphqlGet(BY_ID, JSON.stringify({ id: String(id) }))
    const first = await request(path)
    assert.deepEqual(JSON.parse(first.text), { data: { todoItem: { title: 'alpha' } } })
    assert.ok(first.etag)
    assert.equal((await request(path, { 'if-none-match': first.etag })).status, 304)
    // Other variables are another request: the tag of the first confirms nothing of it.
    const other = await request(graphqlGet(BY_ID, JSON.stringify({ id: '999999' })), {
      'if-none-match': first.etag
    })
    assert.equal(other.status, 200)
    assert.ok(JSON.parse(other.text).errors.length > 0)
  })

  it('tags no answer with errors: a missing record, invalid or missing variables, unparsable variables', async () => {
    for (const variables of [
      JSON.stringify({ id: '999999' }),
      JSON.stringify({ id: { a: 1 } }),
      undefined,
      '{'
    ]) {
      const answered = await request(graphqlGet(BY_ID, variables))
      assert.ok(JSON.parse(answered.text).errors.length > 0, String(variables))
      assert.equal(answered.etag, null, String(variables))
    }
  })

  it('answers HEAD as graphql-http does (405), also with the tag of the GET', async () => {
    const path = graphqlGet(BY_ID, JSON.stringify({ id: String(id) }))
    const { etag } = await request(path)
    const head = await request(path, {}, 'HEAD')
    assert.deepEqual([head.status, head.etag], [405, null])
    const conditional = await request(path, { 'if-none-match': etag! }, 'HEAD')
    assert.deepEqual([conditional.status, conditional.etag], [405, null])
  })
})
