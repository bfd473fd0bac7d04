import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import socketioClient from '@feathersjs/socketio-client'
import type { Client } from 'graphql-ws'
import { io } from 'socket.io-client'
import WebSocket from 'ws'
import { accessToken } from './support/auth-app'
import { graphql } from './support/graphql'
import { mutationAppFactory } from './support/mutation-app'
import { forEachDatabase } from './support/server'
import { graphqlWsClient, wsUrl } from './support/graphql-ws'
import { pollUntil, probeUntil } from './support/eventually'

/** Subscribes, resolving once the server acknowledged the connection; `errors` and `closed` fill as they come. */
function subscribe(client: Client, query: string, variables?: Record<string, unknown>) {
  const state = { events: [] as unknown[], errors: [] as any[], closed: undefined as number | undefined }
  client.on('closed', (event) => (state.closed = (event as { code: number }).code))
  const connected = new Promise<void>((resolve) => client.on('connected', () => resolve()))
  client.subscribe(
    { query, variables },
    {
      next: (result) =>
        result.errors ? state.errors.push(...result.errors) : state.events.push(result.data),
      error: (error) => state.errors.push(...(Array.isArray(error) ? error : [error])),
      complete: () => {}
    }
  )
  return { state, connected }
}

const until = (condition: () => boolean, what: string, ms = 10000) => pollUntil(condition, what, { ms })

/** How long `work` takes, in milliseconds. */
async function timed(work: () => Promise<unknown>) {
  const start = performance.now()
  await work()
  return performance.now() - start
}

forEachDatabase('Hostile subscribers and queries: the example app, anonymous clients', (env) => {
  const clients: Client[] = []
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.dispose()))
  })

  it('matches a like filter in time linear in the title, whatever the pattern (no backtracking)', async () => {
    const client = graphqlWsClient(env.server)
    clients.push(client)
    const pattern = '%a%a%a%a%a%a%a%a%a%a%b'
    const { state, connected } = subscribe(
      client,
      `subscription { createdTodoItem(input: { filter: { title: { like: "${pattern}" } } }) { id } }`
    )
    await connected
    await until(() => env.server.subscriptionListeners('todo-items') > 0, 'the subscription')
    // A backtracking RegExp took seconds per event on this title; every other request waited meanwhile.
    const took = await timed(() =>
      Promise.all([
        env.server.http('POST', '/todo-items', { title: 'a'.repeat(100) }),
        env.server.http('GET', '/todo-items?limit=1')
      ])
    )
    assert.ok(took < 1000, `the writes and reads took ${took.toFixed(0)} ms`)
    const matching = await env.server.http('POST', '/todo-items', { title: 'aaaaaaaaaab' })
    await until(() => state.events.length === 1, 'the matching event')
    assert.deepEqual(state.events, [{ createdTodoItem: { id: String(matching.body.id) } }])
  })

  /** That `filter` selects every record in SQL, and lets the event of `record`'s create through. */
  async function everyRecordAlike(filter: string, record: Record<string, unknown>) {
    const client = graphqlWsClient(env.server)
    clients.push(client)
    const { state, connected } = subscribe(
      client,
      `subscription { createdTodoItem(input: { filter: ${filter} }) { title } }`
    )
    await connected
    // The filter lets every create through: written until the subscription, once live, hears one.
    await probeUntil(
      () => env.server.http('POST', '/todo-items', record),
      () => state.events.length > 0,
      'the subscription hears a create'
    )
    const total = await env.server.db('todo_items').count({ count: '*' })
    const answer = await graphql(env.server, `{ todoItems(filter: ${filter}) { totalCount } }`)
    assert.equal(answer.data.todoItems.totalCount, Number(total[0].count))
  }

  it('reads an empty member of or as "every record" in SQL and in the event matcher alike', async () => {
    await everyRecordAlike('{ or: [{}, { title: { eq: "no such title" } }] }', { title: 'any title' })
  })

  it('reads notIn an empty list as "every record", NULLs included, in SQL and in the event matcher alike', async () => {
    await everyRecordAlike('{ description: { notIn: [] } }', { title: 'no description', description: null })
  })

  it('closes a connection whose message is larger than an HTTP body may be (1009), and serves on', async () => {
    const socket = new WebSocket(wsUrl(env.server), 'graphql-transport-ws')
    await new Promise((resolve) => socket.once('open', resolve))
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
    socket.send(JSON.stringify({ type: 'connection_init', payload: { padding: 'x'.repeat(2 * 2 ** 20) } }))
    assert.equal(await closed, 1009)
    assert.equal((await env.server.http('GET', '/todo-items?limit=1')).status, 200)
  })

  it('refuses variables nested deeper than over HTTP with BAD_USER_INPUT, not a stack overflow', async () => {
    // Written as text: JSON.stringify itself overflows on such nesting; the server's JSON.parse does not.
    const depth = 20000
    const variables = '{"filter":' + '{"and":['.repeat(depth) + '{}' + ']}'.repeat(depth) + '}'
    const query =
      'subscription ($filter: TodoItemSubscriptionFilter!) { createdTodoItem(input: { filter: $filter }) { id } }'
    const socket = new WebSocket(wsUrl(env.server), 'graphql-transport-ws')
    const messages: any[] = []
    socket.on('message', (data) => messages.push(JSON.parse(String(data))))
    await new Promise((resolve) => socket.once('open', resolve))
    try {
      socket.send(JSON.stringify({ type: 'connection_init', payload: {} }))
      await until(() => messages.some((message) => message.type === 'connection_ack'), 'the acknowledgement')
      socket.send(
        `{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(query)},"variables":${variables}}}`
      )
      await until(() => messages.some((message) => message.type === 'error'), 'the refusal')
      const [error] = messages.find((message) => message.type === 'error').payload
      assert.equal(error.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(error))
      assert.match(error.message, /The variables nest/)
    } finally {
      socket.close()
    }
  })

  it('refuses query keys named like prototype properties with a 400, on REST and socket.io, and removes nothing', async () => {
    const seeded = await env.server.http('POST', '/todo-items', { title: 'kept' })
    const feathersSyntax = { 'x-query-syntax': 'feathers' }
    for (const query of [
      'id[toString]=999',
      'title[constructor]=x',
      '__proto__[title]=x',
      'title[$in][hasOwnProperty]=1'
    ]) {
      for (const [method, path] of [
        ['GET', '/todo-items'],
        ['DELETE', '/todo-items'],
        ['GET', '/todo-items/export'],
        ['GET', '/todo-items/aggregate']
      ]) {
        const response = await env.server.http(method, `${path}?${query}`, undefined, feathersSyntax)
        assert.equal(response.status, 400, `${method} ${path}?${query}: ${response.text}`)
        assert.match(response.body.errors[0].message, /a property every object has/)
      }
    }
    const connection = io(env.server.baseUrl, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false
    })
    try {
      const socket = feathers().configure(socketioClient(connection))
      const service = socket.service('todo-items')
      const hostile = JSON.parse('{"__proto__": {"id": 999}}')
      await assert.rejects(service.remove(null, { query: hostile }), (error: any) => {
        assert.equal(error.code, 400, JSON.stringify(error))
        return true
      })
      let deep: Record<string, unknown> = { title: 'x' }
      // socket.io-client itself overflows its stack encoding much deeper than this.
      for (let depth = 0; depth < 1000; depth++) deep = { $or: [deep] }
      await assert.rejects(service.find({ query: deep }), (error: any) => {
        assert.equal(error.code, 400, JSON.stringify(error).slice(0, 300))
        assert.doesNotMatch(JSON.stringify(error), /node_modules|\/src\//)
        return true
      })
    } finally {
      connection.close()
    }
    assert.equal((await env.server.http('GET', `/todo-items/${seeded.body.id}`)).status, 200)
  })
})

forEachDatabase(
  'Hostile subscribers: limits per user and process, tokens that expire',
  (env) => {
    const clients: Client[] = []
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.dispose()))
    })

    it("closes a user's connections past maxConnectionsPerUser (4429); other users connect meanwhile", async () => {
      const token = await accessToken(env.server, 'ann')
      const opened: Array<ReturnType<typeof subscribe>> = []
      for (let index = 0; index < 11; index++) {
        const client = graphqlWsClient(env.server, token)
        clients.push(client)
        opened.push(subscribe(client, 'subscription { createdFolder { id } }'))
      }
      await until(() => opened.some(({ state }) => state.closed !== undefined), 'a refusal')
      const refused = opened.filter(({ state }) => state.closed !== undefined)
      assert.deepEqual(
        refused.map(({ state }) => state.closed),
        [4429]
      )
      const bob = graphqlWsClient(env.server, await accessToken(env.server, 'bob'))
      clients.push(bob)
      const other = subscribe(bob, 'subscription { createdFolder { id } }')
      await other.connected
    })

    it('ends the connection when its token expires (4401), with every subscription it opened', async () => {
      const token = await accessToken(env.server, 'ann', { expiresIn: '2s' })
      const client = graphqlWsClient(env.server, token)
      clients.push(client)
      const { state, connected } = subscribe(client, 'subscription { createdFolder { id } }')
      await connected
      await until(() => state.closed !== undefined, 'the end of the connection', 5000)
      assert.equal(state.closed, 4401)
    })

    it("keeps another user's reads under a second while one user's subscriptions hear a 100-record create", async () => {
      const token = await accessToken(env.server, 'ann')
      for (let index = 0; index < 10; index++) {
        const client = graphqlWsClient(env.server, token)
        clients.push(client)
        const subscriptions = Array.from({ length: 10 }, () =>
          subscribe(client, 'subscription { createdFolder { id name } }')
        )
        await subscriptions[0].connected
      }
      const bob = { authorization: `Bearer ${await accessToken(env.server, 'bob')}` }
      // 100 records in creates of 5 (the fixture's maxMulti), all at once, as Ann's server-side calls.
      const folders = env.server.app.service('folders')
      const asAnn = { query: {}, user: { id: 'ann' } }
      const batch = (start: number) =>
        Array.from({ length: 5 }, (_, index) => ({ name: `f${start + index}` }))
      const write = Promise.all(
        Array.from({ length: 20 }, (_, index) => folders.create(batch(index * 5), asAnn))
      )
      const reads: number[] = []
      for (let index = 0; index < 10; index++) {
        reads.push(await timed(() => env.server.http('GET', '/folders?limit=1', undefined, bob)))
      }
      await write
      assert.equal((await env.server.db('folders').where('owner', 'ann')).length, 100)
      assert.ok(
        Math.max(...reads) < 1000,
        `Bob's reads took ${reads.map((ms) => ms.toFixed(0)).join(', ')} ms`
      )
    })
  },
  mutationAppFactory()
)
