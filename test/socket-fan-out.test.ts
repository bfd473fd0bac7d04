import assert from 'node:assert/strict'
import { accessToken, bearer } from './support/auth-app'
import { createFeathersApp, MAX_MULTI } from './support/feathers-app'
import { runNode, type NodeProcess } from './support/node-process'
import { forEachDatabase, type TestServer } from './support/server'
import { io, type Socket } from 'socket.io-client'

const CONNECTIONS = 500
const WRITES = 20
/** The default of `realtime.maxConnectionsPerUser`. */
const PER_USER = 10

/**
 * Opens `count` socket.io connections in a process of its own (so their parsing costs the server nothing),
 * logs each in with the token (none: `-`), and prints how many were admitted and refused and, on each line
 * of input, the events received.
 */
const CONNECTIONS_SCRIPT = `
const { io } = require('socket.io-client')
const [url, token, count] = process.argv.slice(1)
let events = 0
let admitted = 0
let refused = 0
const settle = (error) => {
  if (error) refused++
  else admitted++
  if (admitted + refused === Number(count)) console.log('settled ' + admitted + ' ' + refused)
}
for (let n = 0; n < Number(count); n++) {
  const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: false })
  socket.on('todo-items created', () => events++)
  if (token === '-') socket.once('connect', () => settle())
  else socket.emit('create', 'authentication', { strategy: 'jwt', accessToken: token }, {}, settle)
}
process.stdin.on('data', () => console.log('events ' + events))
`

/** p99 of `values`. */
function p99(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]
}

interface FanOut {
  /** The connections' user's token, or none. */
  token?: string
  /** Another user's headers, for the reads whose latency counts. */
  reader: Record<string, string>
  /** The writer's headers. */
  writer: Record<string, string>
}

/**
 * Opens the connections, then writes WRITES batches while four readers read, until every admitted connection
 * received every event; answers the connections admitted and refused and the readers' p99.
 */
async function fanOut(server: TestServer, { token, reader, writer }: FanOut, keep: (p: NodeProcess) => void) {
  const connections = runNode(CONNECTIONS_SCRIPT, [server.baseUrl, token ?? '-', String(CONNECTIONS)])
  keep(connections)
  await connections.waitFor((lines) => lines.some((line) => line.startsWith('settled')), 60000)
  const settled = connections.lines.find((line) => line.startsWith('settled'))!
  const [admitted, refused] = settled.split(' ').slice(1).map(Number)
  const latencies: number[] = []
  let writing = true
  const read = async () => {
    while (writing) {
      const start = performance.now()
      const response = await server.http('GET', '/todo-items?limit=5', undefined, reader)
      latencies.push(performance.now() - start)
      assert.equal(response.status, 200)
    }
  }
  const readers = Array.from({ length: 4 }, read)
  const batch = Array.from({ length: MAX_MULTI }, (_, index) => ({ title: `fan-out ${index}` }))
  // Writes five at a time, as several of the user's clients would: their events queue up together.
  for (let round = 0; round < WRITES / 5; round++) {
    const created = await Promise.all(
      Array.from({ length: 5 }, () => server.http('POST', '/todo-items', batch, writer))
    )
    for (const answer of created) assert.equal(answer.status, 201, answer.text)
  }
  const expected = admitted * WRITES * MAX_MULTI
  const deadline = Date.now() + 60000
  for (;;) {
    const seen = connections.lines.length
    connections.send('count')
    await connections.waitFor((lines) => lines.length > seen)
    const delivered = Number(connections.lines.at(-1)!.split(' ')[1])
    if (delivered >= expected) break
    if (Date.now() > deadline) assert.fail(`${delivered} events delivered of ${expected}`)
  }
  writing = false
  await Promise.all(readers)
  assert.ok(latencies.length > 20, `only ${latencies.length} reads`)
  return { admitted, refused, p99: p99(latencies) }
}

/** Declares that the connections a test started are stopped after it, before the server closes (which waits for them). */
function stopsConnectionsAfterEach() {
  let connections: NodeProcess | undefined
  afterEach(async () => {
    await connections?.stop()
  })
  return (started: NodeProcess) => {
    connections = started
  }
}

forEachDatabase('socket.io fan-out: the example app, anonymous connections', (env) => {
  const keep = stopsConnectionsAfterEach()

  it(`keeps other clients' p99 under a second while ${WRITES} writes go to ${CONNECTIONS} connections of one client`, async function () {
    this.timeout(120000)
    const result = await fanOut(env.server, { reader: {}, writer: {} }, keep)
    assert.deepEqual([result.admitted, result.refused], [CONNECTIONS, 0])
    assert.ok(result.p99 < 1000, `the other clients' p99 was ${result.p99.toFixed(0)} ms`)
  })
})

/** ann's connections and writes, bob's reads. */
async function annFansOutToBob(server: TestServer, keep: (started: NodeProcess) => void) {
  const ann = await accessToken(server, 'ann')
  const bob = bearer(await accessToken(server, 'bob'))
  return fanOut(server, { token: ann, reader: bob, writer: bearer(ann) }, keep)
}

forEachDatabase(
  'socket.io fan-out: a user allowed hundreds of connections, events decided per connection',
  (env) => {
    const keep = stopsConnectionsAfterEach()

    it(`keeps another user's p99 under a second while ${WRITES} writes go to ${CONNECTIONS} connections of one user`, async function () {
      // authorize decides each event per connection, in promises that settle at once: without breaths
      // between the decisions, every other request waits for the whole fan-out.
      this.timeout(120000)
      const result = await annFansOutToBob(env.server, keep)
      assert.deepEqual([result.admitted, result.refused], [CONNECTIONS, 0])
      assert.ok(result.p99 < 1000, `the other user's p99 was ${result.p99.toFixed(0)} ms`)
    })
  },
  createFeathersApp({ maxConnectionsPerUser: CONNECTIONS })
)

forEachDatabase(
  'socket.io fan-out: one user with hundreds of connections',
  (env) => {
    const keep = stopsConnectionsAfterEach()

    it(`logs in ${PER_USER} of one user's ${CONNECTIONS} connections, and another user's p99 stays under a second`, async function () {
      this.timeout(120000)
      const result = await annFansOutToBob(env.server, keep)
      assert.deepEqual([result.admitted, result.refused], [PER_USER, CONNECTIONS - PER_USER])
      assert.ok(result.p99 < 1000, `the other user's p99 was ${result.p99.toFixed(0)} ms`)
    })

    it('refuses a login past the bound with a 429 and leaves that connection anonymous; a closed one frees its place', async () => {
      // bob: ann's connections of the test before may still be closing.
      const token = await accessToken(env.server, 'bob')
      const sockets: Socket[] = []
      const open = async () => {
        const socket = io(env.server.baseUrl, {
          transports: ['websocket'],
          forceNew: true,
          reconnection: false
        })
        sockets.push(socket)
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
        return socket
      }
      const call = (socket: Socket, ...args: unknown[]) =>
        new Promise<{ error?: { code: number; message: string }; result?: unknown }>((resolve) =>
          socket.emit(...(args as [string]), (error: any, result: unknown) =>
            resolve({ error: error ?? undefined, result })
          )
        )
      const login = (socket: Socket) =>
        call(socket, 'create', 'authentication', { strategy: 'jwt', accessToken: token }, {})
      try {
        for (let n = 0; n < 10; n++) assert.equal((await login(await open())).error, undefined)
        const eleventh = await open()
        const refused = await login(eleventh)
        assert.equal(refused.error?.code, 429, JSON.stringify(refused.error))
        assert.match(refused.error!.message, /At most 10 real-time connections per user/)
        const anonymous = await call(eleventh, 'find', 'todo-items', {})
        assert.equal(anonymous.error?.code, 401, 'the refused connection stays anonymous')
        // Logging in again on a connection already counted does not count it twice.
        assert.equal((await login(sockets[0])).error, undefined)
        sockets[1].disconnect()
        const deadline = Date.now() + 5000
        let admitted = await login(eleventh)
        while (admitted.error && Date.now() < deadline) admitted = await login(eleventh)
        assert.equal(admitted.error, undefined, JSON.stringify(admitted.error))
        assert.equal((await call(eleventh, 'find', 'todo-items', {})).error, undefined)
      } finally {
        for (const socket of sockets) socket.disconnect()
      }
    })
  },
  createFeathersApp()
)
