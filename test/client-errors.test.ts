import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { serverOn, type TestServer } from './support/server'

/** Sends `request` as raw bytes and reads everything the server answers until it closes the connection. */
function exchange(server: TestServer, request: string) {
  const { port } = new URL(server.baseUrl)
  return new Promise<{ status: number; headers: string; body: string; raw: string }>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    // The server closes right after answering: bytes of the request it never read make that a reset.
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' && answer ? undefined : reject(error)
    )
    socket.on('close', () => {
      const [head, body = ''] = answer.split('\r\n\r\n')
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1]), headers: head, body, raw: answer })
    })
    socket.write(request)
  })
}

// Transport-level: Node refuses these before any database work, so one database is enough.
describe('Requests Node cannot read are answered as Feathers error JSON', () => {
  const env = serverOn('sqlite')

  /** The answer is the status with a Feathers error body (Node's own answers have none). */
  function assertFeathersError(answer: { status: number; headers: string; body: string }, expected: object) {
    assert.equal(answer.status, (expected as { code: number }).code)
    assert.match(answer.headers, /content-type: application\/json/i)
    assert.deepEqual(JSON.parse(answer.body), expected)
  }

  it('headers past the limit: 431 saying so, not an empty answer', async () => {
    const header = `X-Large: ${'a'.repeat(20_000)}\r\n`
    const answer = await exchange(env.server, `GET /todo-items HTTP/1.1\r\nHost: localhost\r\n${header}\r\n`)
    const message = 'The request headers are larger than the server accepts'
    assertFeathersError(answer, {
      name: 'RequestHeaderFieldsTooLarge',
      message,
      code: 431,
      className: 'request-header-fields-too-large'
    })
  })

  it('a request that is not HTTP: 400 with a BadRequest body', async () => {
    const answer = await exchange(env.server, 'NOT HTTP AT ALL\r\n\r\n')
    const message = 'The request is not well-formed HTTP'
    assertFeathersError(answer, { name: 'BadRequest', message, code: 400, className: 'bad-request' })
  })

  it('a malformed request after an answered one on the same connection: 400, and the server serves on', async () => {
    const { port } = new URL(env.server.baseUrl)
    const socket = connect(Number(port), '127.0.0.1')
    socket.setEncoding('utf8')
    let answer = ''
    const closed = new Promise((resolve) => socket.on('close', resolve))
    const firstAnswered = new Promise<void>((resolve) =>
      socket.on('data', (chunk: string) => {
        answer += chunk
        if (/\r\n\r\n\{[^]*\}$/.test(answer)) resolve()
      })
    )
    socket.write('GET /todo-items?limit=1 HTTP/1.1\r\nHost: localhost\r\n\r\n')
    await firstAnswered
    assert.match(answer, /^HTTP\/1\.1 200 OK/)
    socket.write('BROKEN\r\n\r\n')
    await closed
    assert.match(answer, /\}HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\n\{"name":"BadRequest"[^]*"code":400/)
    assert.equal((await fetch(`${env.server.baseUrl}/todo-items?limit=1`)).status, 200)
  })

  it("leaves them to the application's own clientError listener, added after app.listen", async () => {
    const httpServer = (env.server.app as unknown as { server: Server }).server
    const own = (_error: Error, socket: Socket) =>
      socket.end('HTTP/1.1 400 Bad Request\r\nX-Answered-By: app\r\n\r\n')
    httpServer.on('clientError', own)
    try {
      const answer = await exchange(env.server, 'NOT HTTP AT ALL\r\n\r\n')
      assert.equal(answer.status, 400)
      assert.match(answer.headers, /X-Answered-By: app/)
      assert.equal(answer.body, '')
    } finally {
      httpServer.off('clientError', own)
    }
  })
})
