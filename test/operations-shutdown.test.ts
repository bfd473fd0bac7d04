import assert from 'node:assert/strict'
import { once } from 'node:events'
import WebSocket from 'ws'
import { io } from 'socket.io-client'
import { startScript } from '../bench/support/processes'

const SLOW_MS = 1500
const SHUTDOWN_TIMEOUT = 4000

/** Resolves when the process printed `line`. */
function printed(
  lines: string[],
  child: NodeJS.EventEmitter & { stdout: NodeJS.ReadableStream | null },
  line: string
) {
  return new Promise<void>((resolve) => {
    if (lines.includes(line)) return resolve()
    const check = () => {
      if (!lines.includes(line)) return
      child.stdout?.off('data', check)
      resolve()
    }
    // `startScript` collects lines from the same stream; a tick later they are in `lines`.
    child.stdout?.on('data', () => setImmediate(check))
  })
}

describe('Graceful shutdown on SIGTERM (the example app in a process of its own, on SQLite)', function () {
  this.timeout(60000)

  it('finishes the request in flight, closes WebSocket clients with 1001, tears down and exits 0', async () => {
    const server = startScript('../test/support/shutdown-server.ts', {
      DATABASE_URL: 'sqlite::memory:',
      SLOW_MS: String(SLOW_MS),
      SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT)
    })
    const { child, lines } = server
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const port = Number((await server.ready).payload)
      const base = `http://127.0.0.1:${port}`

      const graphqlWs = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws')
      await once(graphqlWs, 'open')
      graphqlWs.send(JSON.stringify({ type: 'connection_init' }))
      await once(graphqlWs, 'message')
      const graphqlClosed = once(graphqlWs, 'close') as Promise<[number, Buffer]>

      const socket = io(base, { transports: ['websocket'], reconnection: false })
      await new Promise((resolve) => socket.once('connect', () => resolve(undefined)))
      const socketClosed = new Promise<[string, { context?: { code?: number } } | undefined]>((resolve) =>
        socket.once('disconnect', (reason, details) =>
          resolve([reason, details as { context?: { code?: number } }])
        )
      )

      const slow = fetch(`${base}/slow`)
      await printed(lines, child, 'SLOW')
      const signalled = performance.now()
      child.kill('SIGTERM')

      const response = await slow
      assert.equal(response.status, 200)
      assert.deepEqual(await response.json(), { finished: true })
      const answeredAfter = performance.now() - signalled

      const [code, reason] = await graphqlClosed
      assert.equal(code, 1001, `graphql-ws closed with ${code} ${reason.toString()}`)
      const [socketReason, socketDetails] = await socketClosed
      assert.equal(socketReason, 'transport close', 'socket.io clients may reconnect elsewhere')
      assert.equal(socketDetails?.context?.code, 1001)

      assert.equal(await exited, 0)
      const took = performance.now() - signalled
      assert.ok(took < SLOW_MS + SHUTDOWN_TIMEOUT, `exited ${Math.round(took)} ms after the signal`)
      assert.ok(answeredAfter >= SLOW_MS - 200, 'the request was in flight when the signal came')
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })
  it('cuts a request still running past the timeout and exits 1 within about the timeout', async () => {
    const timeout = 300
    const server = startScript('../test/support/shutdown-server.ts', {
      DATABASE_URL: 'sqlite::memory:',
      SLOW_MS: '60000',
      SHUTDOWN_TIMEOUT: String(timeout)
    })
    const { child, lines } = server
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const port = Number((await server.ready).payload)
      const held = fetch(`http://127.0.0.1:${port}/slow`).then(
        () => 'answered',
        () => 'cut'
      )
      await printed(lines, child, 'SLOW')
      const signalled = performance.now()
      child.kill('SIGTERM')
      assert.equal(await exited, 1)
      const took = performance.now() - signalled
      assert.ok(took < 2 * timeout + 1000, `exited ${Math.round(took)} ms after the signal`)
      assert.equal(await held, 'cut')
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  })
})
