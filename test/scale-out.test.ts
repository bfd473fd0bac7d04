import assert from 'node:assert/strict'
import { databaseNames } from './support/databases'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'
import {
  eventually,
  reachable,
  REDIS,
  startInstance,
  startInstances,
  type Instance
} from './support/instances'
import { TcpProxy } from './support/tcp-proxy'
import { probeUntil } from './support/eventually'

const INSTANCES = 3
/** Each way, on the link of one more instance to the broker: far longer than the test's next request takes. */
const SLOW_LINK_MS = 250

/**
 * Several processes of the example app behind no load balancer (each is asked directly) on one database,
 * their events synchronised by feathers-sync through Redis: what one instance writes, the others read, and a
 * client connected to any instance hears of it once.
 */
for (const name of databaseNames) {
  describe(`Scaling out: ${INSTANCES} instances on one database, events through Redis [${name}]`, function () {
    const instances: Instance[] = []
    let database: { url: string; drop(): Promise<void> } | undefined
    // One more instance, whose link to Redis is slow: the events of its writes reach the broker late.
    let slow: Instance | undefined
    const slowLink = new TcpProxy(REDIS.host, REDIS.port, SLOW_LINK_MS)

    before(async function () {
      this.timeout(120000)
      if (!(await reachable(REDIS))) {
        console.log(`    (skipped: Redis is not reachable on ${REDIS.host}:${REDIS.port})`)
        this.skip()
      }
      const started = await startInstances(name, INSTANCES)
      database = started.database
      instances.push(...started.instances)
      await slowLink.start()
      slow = await startInstance(started.database.url, started.syncKey, slowLink.port)
    })

    after(async () => {
      for (const instance of instances.splice(0)) instance.stop()
      slow?.stop()
      await slowLink.stop()
      await database?.drop()
    })

    it('reads on every instance what another wrote: REST and GraphQL', async () => {
      const [first, second, third] = instances
      const created = await first.http('POST', '/todo-items', { title: 'written on the first' })
      assert.equal(created.status, 201, created.text)
      const id = created.body.id
      for (const instance of [second, third]) {
        const read = await instance.http('GET', `/todo-items/${id}`)
        assert.equal(read.body.title, 'written on the first')
      }
      assert.equal((await second.http('PATCH', `/todo-items/${id}`, { completed: true })).status, 200)
      const query = `{ todoItems(filter: {id: {eq: ${id}}}) { edges { node { title completed } } } }`
      for (const instance of [first, third]) {
        const response = await instance.http('POST', '/graphql', { query })
        assert.deepEqual(response.body.data.todoItems.edges, [
          { node: { title: 'written on the first', completed: true } }
        ])
      }
      assert.equal((await third.http('DELETE', `/todo-items/${id}`)).status, 200)
      assert.equal((await first.http('GET', `/todo-items/${id}`)).status, 404)
    })

    it('sends each event once to socket.io clients of every instance, whichever instance wrote', async function () {
      this.timeout(30000)
      const [first, second, third] = instances
      const headers = { 'user-name': 'ann' }
      const created = await first.http('POST', '/todo-items', { title: 'heard everywhere' }, headers)
      const id = created.body.id
      const patching = Date.now()
      await second.client.service('todo-items').patch(id, { priority: 3 })
      await third.http('DELETE', `/todo-items/${id}`)
      // Only this record's events: the previous test's may still be on their way.
      const eventsOf = (instance: Instance) =>
        instance.events.filter((event) => event.path === 'todo-items' && event.data.id === id)
      await eventually(() => instances.every((instance) => eventsOf(instance).length >= 3))
      for (const [index, instance] of instances.entries()) {
        const heard = eventsOf(instance).map(({ event, data }) => [event, data.id, data.title, data.priority])
        assert.deepEqual(
          heard,
          [
            ['created', id, 'heard everywhere', 0],
            ['patched', id, 'heard everywhere', 3],
            ['removed', id, 'heard everywhere', 3]
          ],
          `instance ${index + 1}`
        )
        // Hidden fields stay on the server on every instance, also after a trip through Redis.
        for (const { data } of eventsOf(instance)) assert.ok(!('createdBy' in data) && !('updatedBy' in data))
      }
      const latest = Math.max(...instances.map((instance) => eventsOf(instance)[1].at - patching))
      console.log(
        `      (the patch's event reached the last instance's client ${latest} ms after it was sent)`
      )
    })

    it('answers a write once Redis has its events: a later write, anywhere, is heard after it', async function () {
      this.timeout(30000)
      const [first, second] = instances
      const everywhere = [...instances, slow!]
      const heard = (path: string, id: unknown) => (instance: Instance) =>
        instance.events
          .filter((event) => event.path === path && String(event.data.id) === String(id))
          .map(({ event, data }) => [event, data.title, data.priority ?? data.todoItemId])
      // REST on the slow instance, then at once socket.io on another.
      const created = await slow!.http('POST', '/todo-items', { title: 'from afar' })
      assert.equal(created.status, 201, created.text)
      const id = created.body.id
      await first.client.service('todo-items').patch(id, { priority: 4 })
      // A GraphQL relation mutation on the slow instance: the sub task's event is announced when its
      // transaction commits, and the answer waits for the broker all the same.
      const other = await first.http('POST', '/todo-items', { title: 'the other parent' })
      const parentId = String(other.body.id)
      const subTask = await first.http('POST', '/sub-tasks', { title: 'moved', todoItemId: parentId })
      assert.equal(subTask.status, 201, subTask.text)
      const input = `{ id: ${id}, relationIds: [${subTask.body.id}] }`
      const query = `mutation { addSubTasksToTodoItem(input: ${input}) { id } }`
      const moved = await slow!.http('POST', '/graphql', { query })
      assert.equal(moved.body.errors, undefined, moved.text)
      await second.http('PATCH', `/sub-tasks/${subTask.body.id}`, { title: 'moved and renamed' })
      const todoEvents = heard('todo-items', id)
      const subTaskEvents = heard('sub-tasks', subTask.body.id)
      const allHeard = (instance: Instance) =>
        todoEvents(instance).length >= 2 && subTaskEvents(instance).length >= 3
      await eventually(() => everywhere.every(allHeard))
      for (const [index, instance] of everywhere.entries()) {
        const name = index === INSTANCES ? 'the slow instance' : `instance ${index + 1}`
        assert.deepEqual(
          todoEvents(instance),
          [
            ['created', 'from afar', 0],
            ['patched', 'from afar', 4]
          ],
          name
        )
        assert.deepEqual(
          subTaskEvents(instance),
          [
            ['created', 'moved', parentId],
            ['patched', 'moved', String(id)],
            ['patched', 'moved and renamed', String(id)]
          ],
          name
        )
      }
    })

    it('feeds GraphQL subscriptions on every instance, whichever instance wrote', async function () {
      this.timeout(30000)
      const heard: Array<Array<{ id: string; title: string }>> = instances.map(() => [])
      const query =
        'subscription { createdTodoItem(input: { filter: { priority: { gte: 2 } } }) { id title } }'
      const clients = instances.map((instance, index) => {
        const client = createClient({
          url: `${instance.baseUrl.replace(/^http/, 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          retryAttempts: 0
        })
        client.subscribe(
          { query },
          {
            next: (result) => heard[index].push((result.data as any).createdTodoItem),
            error: () => {},
            complete: () => {}
          }
        )
        return client
      })
      try {
        const [first, second] = instances
        // A subscription is live once its own check (a find) ran: probes until every client heard one.
        await probeUntil(
          () => first.http('POST', '/todo-items', { title: 'probe', priority: 2 }),
          () => heard.every((records) => records.length > 0),
          'every instance’s subscriber heard a probe'
        )
        await first.http('POST', '/todo-items', { title: 'low', priority: 1 })
        const created = await second.http('POST', '/todo-items', {
          title: 'to every subscriber',
          priority: 2
        })
        const real = (records: Array<{ title: string }>) =>
          records.filter((record) => record.title !== 'probe')
        await eventually(() => heard.every((records) => real(records).length >= 1))
        for (const [index, records] of heard.entries()) {
          const expected = [{ id: String(created.body.id), title: 'to every subscriber' }]
          assert.deepEqual(real(records), expected, `instance ${index + 1}`)
        }
      } finally {
        await Promise.all(clients.map((client) => client.dispose()))
      }
    })

    it('keeps live results right on every instance, whichever instance wrote', async function () {
      this.timeout(30000)
      const counts: number[][] = instances.map(() => [])
      const query =
        'subscription { todoItemAggregate(filter: { title: { like: "live-%" } }) { count { id } } }'
      const clients = instances.map((instance, index) => {
        const client = createClient({
          url: `${instance.baseUrl.replace(/^http/, 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          retryAttempts: 0
        })
        client.subscribe(
          { query },
          {
            next: (result) => counts[index].push((result.data as any).todoItemAggregate[0].count.id),
            error: () => {},
            complete: () => {}
          }
        )
        return client
      })
      try {
        await eventually(() => counts.every((seen) => seen.length === 1))
        const before = counts.map((seen) => seen[0])
        assert.ok(
          before.every((count) => count === before[0]),
          `one first result: ${before}`
        )
        await instances[1].http('POST', '/todo-items', { title: 'live-one', priority: 1 })
        await instances[0].http('POST', '/todo-items', { title: 'not live', priority: 1 })
        await eventually(() => counts.every((seen) => seen.at(-1) === before[0] + 1))
        for (const [index, seen] of counts.entries()) {
          assert.deepEqual(seen, [before[0], before[0] + 1], `instance ${index + 1}`)
        }
      } finally {
        await Promise.all(clients.map((client) => client.dispose()))
      }
    })
  })
}
