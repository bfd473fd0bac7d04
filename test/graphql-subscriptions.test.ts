import assert from 'node:assert/strict'
import type { Client } from 'graphql-ws'
import WebSocket from 'ws'
import { accessToken, bearer } from './support/auth-app'
import { graphql } from './support/graphql'
import { mutationAppFactory } from './support/mutation-app'
import { forEachDatabase, type TestServer } from './support/server'
import { graphqlWsClient, wsUrl } from './support/graphql-ws'
import { pollUntil, probeUntil } from './support/eventually'

interface Watch {
  events: any[]
  errors: any[]
  done: Promise<void>
  stop(): void
}

function watch(client: Client, query: string, variables?: Record<string, unknown>): Watch {
  const events: any[] = []
  const errors: any[] = []
  let stop = () => {}
  const done = new Promise<void>((resolve) => {
    stop = client.subscribe(
      { query, variables },
      {
        next: (result) => (result.errors ? errors.push(...result.errors) : events.push(result.data)),
        // GraphQL errors come as a list, a closed connection as its close event.
        error: (error) => {
          if (Array.isArray(error)) errors.push(...error)
          else errors.push(error)
          resolve()
        },
        complete: resolve
      }
    )
  })
  return { events, errors, done, stop: () => stop() }
}

const until = (condition: () => boolean, what: string, ms = 5000) => pollUntil(condition, what, { ms })

const subscribers = (server: TestServer, path: string) => server.subscriptionListeners(path)

/**
 * Makes `watches` live before a test writes what they must hear: writes `probe()` until each heard something,
 * then `closing()`, and waits until each one's last event is a closing one (`closed`): its events coming in
 * order, no probe is still on its way to it then. Their events are cleared for the test.
 */
async function live(
  watches: Watch[],
  writes: { probe(): Promise<unknown>; closing(): Promise<unknown>; closed(event: any): boolean }
) {
  const heard = () => watches.every((watch) => watch.events.length > 0)
  await probeUntil(writes.probe, heard, 'every subscription heard a probe')
  await writes.closing()
  await until(
    () => heard() && watches.every((watch) => writes.closed(watch.events.at(-1))),
    'the closing events'
  )
  for (const watch of watches) watch.events.length = 0
}

forEachDatabase(
  'GraphQL subscriptions over graphql-ws, fed by the services’ events',
  (env) => {
    let annToken: string
    let bobToken: string
    const clients: Client[] = []
    const client = (token?: string) => {
      const made = graphqlWsClient(env.server, token)
      clients.push(made)
      return made
    }
    const rest = (token: string, method: string, path: string, body?: unknown) =>
      env.server.http(method, path, body, bearer(token))

    before(async () => {
      annToken = await accessToken(env.server, 'ann')
      bobToken = await accessToken(env.server, 'bob')
    })
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((made) => made.dispose()))
    })

    it('each subscriber gets only the records its authorize admits and its filter matches, from REST writes', async () => {
      const annWatch = watch(
        client(annToken),
        'subscription { createdFolder(input: { filter: { name: { like: "x%" } } }) { id name } }'
      )
      const bobWatch = watch(client(bobToken), 'subscription { createdFolder { name rank } }')
      // Each hears folders of its own: ann's match her filter.
      const both = async (ann: string, bob: string) => {
        assert.equal((await rest(annToken, 'POST', '/folders', { name: ann })).status, 201)
        assert.equal((await rest(bobToken, 'POST', '/folders', { name: bob })).status, 201)
      }
      await live([annWatch, bobWatch], {
        probe: () => both('x-probe', 'probe'),
        closing: () => both('x-closing', 'closing'),
        closed: (event) => /closing$/.test(event.createdFolder.name)
      })
      assert.equal((await rest(annToken, 'POST', '/folders', { name: 'x-ann' })).status, 201)
      assert.equal((await rest(annToken, 'POST', '/folders', { name: 'y-ann' })).status, 201)
      assert.equal((await rest(bobToken, 'POST', '/folders', { name: 'x-bob', rank: 3 })).status, 201)
      // Sentinels: each subscriber's events come in order, so once its sentinel is in, nothing else is coming.
      assert.equal((await rest(annToken, 'POST', '/folders', { name: 'x-sentinel' })).status, 201)
      assert.equal((await rest(bobToken, 'POST', '/folders', { name: 'sentinel', rank: 9 })).status, 201)
      const last = (watch: { events: any[] }) => watch.events.at(-1)?.createdFolder.name
      await until(() => last(annWatch) === 'x-sentinel' && last(bobWatch) === 'sentinel', 'the sentinels')
      assert.deepEqual(
        annWatch.events.map((event) => event.createdFolder.name),
        ['x-ann', 'x-sentinel']
      )
      assert.deepEqual(bobWatch.events, [
        { createdFolder: { name: 'x-bob', rank: 3 } },
        { createdFolder: { name: 'sentinel', rank: 9 } }
      ])
      assert.deepEqual(annWatch.errors, [])
    })

    it('updatedOne, deletedOne and the many-subscriptions report GraphQL mutations, counted per subscriber', async () => {
      const annClient = client(annToken)
      const updated = watch(annClient, 'subscription { updatedOneFolder { name } }')
      const deleted = watch(annClient, 'subscription { deletedOneFolder { id name } }')
      // Two per connection at most (this suite's maxSubscriptions).
      const annSecond = client(annToken)
      const updatedMany = watch(annSecond, 'subscription { updatedManyFolders { updatedCount } }')
      const deletedMany = watch(annSecond, 'subscription { deletedManyFolders { deletedCount } }')
      const bobMany = watch(client(bobToken), 'subscription { deletedManyFolders { deletedCount } }')
      const mutate = async (token: string, query: string) => {
        const answer = await graphql(env.server, `mutation { ${query} }`, undefined, bearer(token))
        assert.equal(answer.errors, undefined, JSON.stringify(answer.errors))
        return answer.data
      }
      /** Writes that each of ann's subscriptions hears once, counting `count` folders; bob's, `bobCount`. */
      const cycle = async (name: string, count: number, bobCount: number) => {
        const make = (index: number, rank: number) =>
          `f${index}: createOneFolder(input: { folder: { name: "${name}", rank: ${rank} } }) { id }`
        const made = await mutate(
          annToken,
          Array.from({ length: count }, (_, index) => make(index, 100)).join(' ')
        )
        await mutate(
          annToken,
          `updateOneFolder(input: { id: ${made.f0.id}, update: { name: "${name}!" } }) { id }`
        )
        await mutate(
          annToken,
          'updateManyFolders(input: { filter: { rank: { eq: 100 } }, update: { rank: 101 } }) { updatedCount }'
        )
        await mutate(annToken, `deleteOneFolder(input: { id: ${made.f0.id} }) { name }`)
        await mutate(annToken, 'deleteManyFolders(input: { filter: { rank: { eq: 101 } } }) { deletedCount }')
        await mutate(bobToken, Array.from({ length: bobCount }, (_, index) => make(index, 102)).join(' '))
        await mutate(bobToken, 'deleteManyFolders(input: { filter: { rank: { eq: 102 } } }) { deletedCount }')
      }
      // Closing counts (3 updated, 2 deleted) that neither the probes nor the test's writes make.
      await live([updated, deleted, updatedMany, deletedMany, bobMany], {
        probe: () => cycle('probe', 2, 1),
        closing: () => cycle('closing', 3, 2),
        closed: (event) =>
          [event.updatedOneFolder?.name, event.deletedOneFolder?.name].includes('closing!') ||
          event.updatedManyFolders?.updatedCount === 3 ||
          event.deletedManyFolders?.deletedCount === 2
      })
      const created = await graphql(
        env.server,
        'mutation { a: createOneFolder(input: { folder: { name: "s1", rank: 5 } }) { id } b: createOneFolder(input: { folder: { name: "s2", rank: 5 } }) { id } }',
        undefined,
        bearer(annToken)
      )
      const id = created.data.a.id
      await graphql(
        env.server,
        `mutation { updateOneFolder(input: { id: ${id}, update: { name: "s1!" } }) { id } }`,
        undefined,
        bearer(annToken)
      )
      await graphql(
        env.server,
        'mutation { updateManyFolders(input: { filter: { rank: { eq: 5 } }, update: { rank: 6 } }) { updatedCount } }',
        undefined,
        bearer(annToken)
      )
      await graphql(
        env.server,
        `mutation { deleteOneFolder(input: { id: ${id} }) { name } }`,
        undefined,
        bearer(annToken)
      )
      await graphql(
        env.server,
        'mutation { deleteManyFolders(input: { filter: { rank: { eq: 6 } } }) { deletedCount } }',
        undefined,
        bearer(annToken)
      )
      const heard = [updated, deleted, updatedMany, deletedMany]
      await until(() => heard.every((subscription) => subscription.events.length > 0), 'events')
      // Bob's sentinel: a remove of his own, which his subscriber hears after anything that reached it before.
      await graphql(
        env.server,
        'mutation { createOneFolder(input: { folder: { name: "bob sentinel", rank: 42 } }) { id } }',
        undefined,
        bearer(bobToken)
      )
      await graphql(
        env.server,
        'mutation { deleteManyFolders(input: { filter: { rank: { eq: 42 } } }) { deletedCount } }',
        undefined,
        bearer(bobToken)
      )
      await until(() => bobMany.events.length > 0, "bob's sentinel")
      assert.deepEqual(updated.events, [{ updatedOneFolder: { name: 's1!' } }])
      assert.deepEqual(deleted.events, [{ deletedOneFolder: { id, name: 's1!' } }])
      assert.deepEqual(updatedMany.events, [{ updatedManyFolders: { updatedCount: 2 } }])
      assert.deepEqual(deletedMany.events, [{ deletedManyFolders: { deletedCount: 1 } }])
      assert.deepEqual(
        bobMany.events,
        [{ deletedManyFolders: { deletedCount: 1 } }],
        "bob hears nothing of ann's records, only his own"
      )
    })

    it('a rolled-back relation mutation announces nothing; its writes are announced once it commits', async () => {
      const folder = await graphql(
        env.server,
        'mutation { createOneFolder(input: { folder: { name: "target" } }) { id } }',
        undefined,
        bearer(annToken)
      )
      const notes = await graphql(
        env.server,
        'mutation { a: createOneNote(input: { note: { text: "a" } }) { id } b: createOneNote(input: { note: { text: "b" } }) { id } }',
        undefined,
        bearer(annToken)
      )
      const hidden = await graphql(
        env.server,
        'mutation { createOneNote(input: { note: { text: "bob" } }) { id } }',
        undefined,
        bearer(bobToken)
      )
      const folderId = folder.data.createOneFolder.id
      const { a, b } = notes.data
      const probe = await graphql(
        env.server,
        'mutation { createOneNote(input: { note: { text: "probe" } }) { id } }',
        undefined,
        bearer(annToken)
      )
      /** Renames ann's probe note, outside the folder: her subscriber hears it. */
      const rename = (text: string) =>
        graphql(
          env.server,
          `mutation { updateOneNote(input: { id: ${probe.data.createOneNote.id}, update: { text: "${text}" } }) { id } }`,
          undefined,
          bearer(annToken)
        )
      const updated = watch(client(annToken), 'subscription { updatedOneNote { text folderId } }')
      await live([updated], {
        probe: () => rename('probe'),
        closing: () => rename('closing'),
        closed: (event) => event.updatedOneNote.text === 'closing'
      })
      const refused = await graphql(
        env.server,
        `mutation { addNotesToFolder(input: { id: ${folderId}, relationIds: [${a.id}, ${hidden.data.createOneNote.id}] }) { id } }`,
        undefined,
        bearer(annToken)
      )
      assert.equal(refused.errors?.[0]?.extensions?.code, 'NOT_FOUND')
      const added = await graphql(
        env.server,
        `mutation { addNotesToFolder(input: { id: ${folderId}, relationIds: [${b.id}] }) { id } }`,
        undefined,
        bearer(annToken)
      )
      assert.equal(added.errors, undefined)
      await until(() => updated.events.length > 0, 'the committed change')
      // The sentinel: heard after anything either addNotesToFolder announced.
      await rename('sentinel')
      await until(() => updated.events.at(-1)?.updatedOneNote.text === 'sentinel', 'the sentinel')
      assert.deepEqual(updated.events, [
        { updatedOneNote: { text: 'b', folderId: Number(folderId) } },
        { updatedOneNote: { text: 'sentinel', folderId: null } }
      ])
    })

    it('without a token the guard refuses the subscription; a bad token closes the connection', async () => {
      const anonymous = watch(client(), 'subscription { createdFolder { id } }')
      await anonymous.done
      assert.equal(anonymous.errors[0]?.extensions?.code, 'UNAUTHENTICATED')
      const forged = watch(client('not a token'), 'subscription { createdFolder { id } }')
      await forged.done
      assert.equal((forged.errors[0] as { code?: number }).code, 4403)
    })

    it('a bad filter is BAD_USER_INPUT naming it before anything is delivered', async () => {
      const bad = watch(
        client(annToken),
        'subscription { createdFolder(input: { filter: { name: { like: "a\\\\" } } }) { id } }'
      )
      await bad.done
      const error = bad.errors[0]
      assert.equal(error.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(bad.errors))
    })

    it('queries and mutations run over the WebSocket too, with the connection’s user and the same limits', async () => {
      const annClient = client(annToken)
      const created = watch(
        annClient,
        'mutation { createOneFolder(input: { folder: { name: "over ws" } }) { name } }'
      )
      await created.done
      assert.deepEqual(created.events, [{ createOneFolder: { name: 'over ws' } }])
      const read = watch(
        annClient,
        '{ folders(filter: { name: { eq: "over ws" } }) { edges { node { name } } } }'
      )
      await read.done
      assert.deepEqual(read.events, [{ folders: { edges: [{ node: { name: 'over ws' } }] } }])
      const bobRead = watch(
        client(bobToken),
        '{ folders(filter: { name: { eq: "over ws" } }) { edges { node { name } } } }'
      )
      await bobRead.done
      assert.deepEqual(bobRead.events, [{ folders: { edges: [] } }])
      const deep = 'notes { edges { node { folder { notes { edges { node { folder { name } } } } } } } }'
      const tooDeep = watch(annClient, `{ folders { edges { node { ${deep.replace('name', deep)} } } } }`)
      await tooDeep.done
      assert.equal(tooDeep.errors[0]?.extensions?.code, 'QUERY_TOO_DEEP')
    })

    it('validates operations as HTTP does: unknown fields, arguments and filter fields are refused', async () => {
      const annClient = client(annToken)
      const documents = [
        '{ folders { edges { node { name bogusField123 } } } }',
        '{ folders(bogusArg: 1) { edges { node { name } } } }',
        'query ($g: Int) { folders(paging: { first: $h }) { edges { node { name } } } }',
        'subscription { createdFolder(input: { filter: { nope: { eq: 1 } } }) { name } }'
      ]
      for (const document of documents) {
        const operation = watch(annClient, document)
        await operation.done
        assert.deepEqual(operation.events, [], document)
        assert.equal(operation.errors[0]?.extensions?.code, 'GRAPHQL_VALIDATION_FAILED', document)
        // The same text over HTTP afterwards: judged anew, not taken from what the WebSocket cached.
        if (document.startsWith('subscription')) continue
        const overHttp = await graphql(env.server, document, undefined, bearer(annToken))
        assert.equal(overHttp.errors?.[0]?.extensions?.code, 'GRAPHQL_VALIDATION_FAILED', document)
      }
    })

    it('a connection runs at most maxSubscriptions operations at once', async () => {
      const shared = client(annToken)
      const live = Array.from({ length: 2 }, () => watch(shared, 'subscription { createdNote { id } }'))
      await until(() => subscribers(env.server, 'notes') > 0, 'two subscribers')
      const third = watch(shared, 'subscription { createdNote { id } }')
      await third.done
      assert.equal(third.errors[0]?.extensions?.code, 'TOO_MANY_SUBSCRIPTIONS')
      live.forEach((subscription) => assert.deepEqual(subscription.errors, []))
    })

    it('listeners go back to zero after unsubscribe and after the connection closes', async () => {
      await until(
        () => subscribers(env.server, 'folders') === 0 && subscribers(env.server, 'notes') === 0,
        'clean slate'
      )
      const first = client(annToken)
      const a = watch(first, 'subscription { createdFolder { id } }')
      const b = watch(client(bobToken), 'subscription { createdFolder { id } }')
      await until(() => subscribers(env.server, 'folders') === 1, 'listening')
      a.stop()
      b.stop()
      await until(() => subscribers(env.server, 'folders') === 0, 'unsubscribed')
      const c = watch(first, 'subscription { deletedOneFolder { name } }')
      await until(() => subscribers(env.server, 'folders') === 1, 'listening again')
      await first.dispose()
      await c.done
      await until(() => subscribers(env.server, 'folders') === 0, 'closed')
    })

    it('a subscriber that stops reading loses its connection (4429) instead of growing a backlog', async function () {
      this.timeout(60000)
      const socket = new WebSocket(wsUrl(env.server), 'graphql-transport-ws')
      await new Promise((resolve) => socket.once('open', resolve))
      const messages: any[] = []
      socket.on('message', (data) => messages.push(JSON.parse(String(data))))
      socket.send(JSON.stringify({ type: 'connection_init', payload: { accessToken: annToken } }))
      await until(() => messages.some((message) => message.type === 'connection_ack'), 'ack')
      socket.send(
        JSON.stringify({
          id: '1',
          type: 'subscribe',
          payload: { query: 'subscription { createdFolder { name } }' }
        })
      )
      const heard = () => messages.some((message) => message.type === 'next')
      await probeUntil(
        () => rest(annToken, 'POST', '/folders', { name: 'probe' }),
        heard,
        'the subscription heard a probe'
      )
      const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
      // Stop reading: the server's writes back up once the kernel buffers are full.
      ;(socket as unknown as { _socket: { pause(): void } })._socket.pause()
      const name = 'n'.repeat(60_000)
      let code: number | undefined
      void closed.then((value) => (code = value))
      for (let index = 0; index < 400 && code === undefined; index++) {
        await rest(annToken, 'POST', '/folders', { name, rank: index })
      }
      ;(socket as unknown as { _socket: { resume(): void } })._socket.resume()
      assert.equal(await closed, 4429)
      await until(() => subscribers(env.server, 'folders') === 0, 'dropped')
    })
  },
  mutationAppFactory({ limits: { maxSubscriptions: 2, maxQueuedEvents: 5 } })
)
