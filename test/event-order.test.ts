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

/** Ids whose next `authorize` check for an event takes a while, as a rule that looks something up would. */
const slowOnce = new Set<string>()

const todoItems = defineResource({
  ...todoItemResource,
  async authorize(context: HookContext) {
    const id = String(context.id)
    if (context.method === 'get' && slowOnce.delete(id))
      await new Promise((resolve) => setTimeout(resolve, 150))
    return undefined
  }
})

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
  app.publish(authorizedPublisher(() => app.channel('everyone')))
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
      client
        .service('todo-items')
        .on('patched', (record: { priority: number }) => heard.push(record.priority))
      try {
        await new Promise<void>((resolve) => socket.on('connect', () => resolve()))
        const service = env.server.app.service('todo-items')
        const created = (await service.create({ title: 'ordered' })) as { id: number }
        // The first patch's event waits 150 ms for its check; the second's is decided at once.
        slowOnce.add(String(created.id))
        await service.patch(created.id, { priority: 1 })
        await service.patch(created.id, { priority: 2 })
        const deadline = Date.now() + 5000
        while (heard.length < 2 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10))
        assert.deepEqual(heard, [1, 2])
      } finally {
        socket.close()
      }
    })
  },
  eventsApp
)
