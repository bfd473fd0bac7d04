import assert from 'node:assert/strict'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { forEachDatabase, type TestServer } from './support/server'

const COMPRESS: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync
}

/** POSTs raw bytes as JSON with a Content-Encoding header; the answer parsed as JSON. */
async function post(server: TestServer, path: string, bytes: Buffer, encoding: string) {
  const response = await fetch(server.baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': encoding },
    body: bytes
  })
  return { status: response.status, body: (await response.json()) as any }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value))
const graphqlQuery = json({ query: '{ todoItems { totalCount } }' })

forEachDatabase('Request bodies with a Content-Encoding', (env) => {
  const count = async () => Number((await env.server.db('todo_items').count({ n: '*' }))[0].n)

  it('refuses a body its Content-Encoding does not describe: 400 naming the header', async () => {
    const before = await count()
    const truncated = (bytes: Buffer) => gzipSync(bytes).subarray(0, 12)
    // [encoding, REST body, GraphQL body]: plain JSON under each coding, and a gzip stream cut short.
    const cases: Array<[string, Buffer, Buffer]> = [
      ...Object.keys(COMPRESS).map((encoding): [string, Buffer, Buffer] => [
        encoding,
        json({ title: 'plain' }),
        graphqlQuery
      ]),
      ['gzip', truncated(json({ title: 'cut short' })), truncated(graphqlQuery)]
    ]
    for (const [encoding, restBody, graphqlBody] of cases) {
      const rest = await post(env.server, '/todo-items', restBody, encoding)
      assert.equal(rest.status, 400, `${encoding}: ${JSON.stringify(rest.body)}`)
      assert.equal(rest.body.name, 'BadRequest')
      assert.equal(rest.body.className, 'bad-request')
      assert.match(rest.body.message, new RegExp(`not valid ${encoding} data`))
      assert.equal(rest.body.errors[0].field, 'headers.content-encoding')

      const graphql = await post(env.server, '/graphql', graphqlBody, encoding)
      assert.equal(graphql.status, 400, `${encoding}: ${JSON.stringify(graphql.body)}`)
      assert.equal(graphql.body.errors[0].extensions.code, 'BAD_REQUEST')
      assert.equal(graphql.body.errors[0].extensions.errors[0].field, 'headers.content-encoding')
    }
    assert.equal(await count(), before)
  })

  it('reads gzip, deflate and br bodies, with the body limit counted after inflating', async () => {
    for (const [encoding, compress] of Object.entries(COMPRESS)) {
      const body = compress(json({ title: `sent as ${encoding}` }))
      const created = await post(env.server, '/todo-items', body, encoding)
      assert.equal(created.status, 201, JSON.stringify(created.body))
      assert.equal(created.body.title, `sent as ${encoding}`)
      const graphql = await post(env.server, '/graphql', compress(graphqlQuery), encoding)
      assert.equal(graphql.status, 200, JSON.stringify(graphql.body))
      assert.equal(typeof graphql.body.data.todoItems.totalCount, 'number')

      // 2 MB of JSON that compresses to a few kilobytes is still over the parser's 1 MB limit.
      const bomb = compress(json({ title: 'x'.repeat(2 * 1024 * 1024) }))
      assert.ok(bomb.length < 64 * 1024)
      const tooLarge = await post(env.server, '/todo-items', bomb, encoding)
      assert.equal(tooLarge.status, 413)
      assert.equal(tooLarge.body.name, 'PayloadTooLarge')
    }
  })

  it('refuses a coding it does not know with 415', async () => {
    const rest = await post(env.server, '/todo-items', json({ title: 'packed' }), 'compress')
    assert.equal(rest.status, 415)
    assert.equal(rest.body.name, 'UnsupportedMediaType')
    const graphql = await post(env.server, '/graphql', graphqlQuery, 'compress')
    assert.equal(graphql.status, 415)
    assert.equal(graphql.body.errors[0].extensions.code, 'UNSUPPORTED_MEDIA_TYPE')
  })
})
