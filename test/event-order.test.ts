import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa } from '@feathersjs/koa'
import socketio from '@feathersjs/socketio'
import socketioClient from '@feathersjs/socketio-client'
import knex from 'knex'
import { io } from 'socket.io-client'
import { knexConfig } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { tagResources } from '../example/resources'
import { subTaskResource } from '../example/resources/sub-task'
import { todoItemResource } from '../example/resources/todo-item'
import { stampCreation, stampUpdate } from '../example/hooks/audit'
import { authorizedPublisher, defineResource, errorHandler, feathersQuery } from '../src'
import { forEachDatabase, type AppFactory } from './support/server'
import { pollUntil } from './support/eventually'

/** A record whose next `authorize` check for an event waits for `opened`, as a rule that looks something up would. */
let held: { id: string; opened: Promise<void> } | undefined

const todoItems = defineResource({
  ...todoItemResource,
  async authorize(context: HookContext) {
    if (context.method === 'get' && held?.id === String(context.id)) {
      const { opened } = held
      held = undefined
      await opened
    }
    return undefined
  }
})

/** The priorities of the patched events whose publishing started, in order (see `eventsApp`). */
const publishing: unknown[] = []

/** The example's resources behind socket.io, every connection in one channel, events through authorizedPublisher. */
const eventsApp: AppFactory = async (databaseUrl) => {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  const app = koa(feathers())
  app.use(errorHandler(() => {}))
  app.use(bodyParser())
  app.configure(socketio())
  app.configure(feathersQuery({ Model: db, resources: [todoItems, subTaskResource, ...tagResources] }))
  app.service('todo-items').hooks({ before: { create: [stampCreation], patch: [stampUpdate] } })
  app.on('connection', (connection) => app.channel('everyone').join(connection as never))
  // authorizedPublisher calls this as it starts deciding an event, once the events before it were decided.
  app.publish(
    authorizedPublisher((data: { priority?: unknown }, context: HookContext) => {
      if (context.method === 'patch') publishing.push(data.priority)
      return app.channel('everyone')
    })
  )
  return { app, db }
}

forEachDatabase(
  'Events reach a connection in the order of the writes, whatever authorize takes',
  (env) => {
    it('a patch whose authorize check is slow is still heard before the patch after it', async () => {
      const socket = io(env.server.baseUrl, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false
      })
      const client = feathers().configure(socketioClient(socket))
      const heard: number[] = []
      let created: { id: number } | undefined
      const todoService = client.service('todo-items')
      todoService.on('created', (record: { id: number }) => (created = record))
      todoService.on('patched', (record: { priority: number }) => heard.push(record.priority))
      try {
        await new Promise<void>((resolve) => socket.on('connect', () => resolve()))
        const service = env.server.app.service('todo-items')
        const { id } = (await service.create({ title: 'ordered' })) as { id: number }
        // The created event's own check is done: the hold is for the first patch's.
        await pollUntil(() => created?.id === id, 'the created event')
        publishing.length = 0
        let open = () => {}
        held = { id: String(id), opened: new Promise<void>((resolve) => (open = resolve)) }
        // The first patch's check is held; the second's is decided at once.
        await service.patch(id, { priority: 1 })
        await service.patch(id, { priority: 2 })
        await pollUntil(() => held === undefined, "the first patch's check to be held")
        // Deciding an event starts as it is emitted, unless it waits for the one before: if the second's has
        // started, let it be heard, as it would be while the first's check took its time.
        if (publishing.includes(2)) await pollUntil(() => heard.includes(2), 'the second event')
        open()
        await pollUntil(() => heard.length >= 2, 'both events')
        assert.deepEqual(heard, [1, 2])
      } finally {
        socket.close()
      }
    })
  },
  eventsApp
)
