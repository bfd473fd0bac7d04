import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import { createApp } from '../example/app'
import { forEachDatabase } from './support/server'
import { graphql } from './support/graphql'

/** What after hooks saw: for each method and service, whether every record was a plain object. */
type Seen = Array<{ path: string; method: string; plain: boolean }>

const recordsOf = (result: unknown): unknown[] => {
  if (Array.isArray(result)) return result
  const page = result as { data?: unknown }
  return Array.isArray(page?.data) ? page.data : [result]
}

/** Plain as hooks and libraries test it: an object whose prototype is Object.prototype. */
const isPlain = (record: unknown) =>
  typeof record === 'object' && record !== null && Object.getPrototypeOf(record) === Object.prototype

forEachDatabase(
  'Records as hooks receive them',
  (env) => {
    const seen = () => (env.server.app as unknown as { seen: Seen }).seen

    before(async () => {
      const { db } = env.server
      await db('sub_tasks').delete()
      await db('todo_items').delete()
      const created = new Date('2026-03-01T00:00:00.000Z')
      await db('todo_items').insert({ id: 1, title: 'one', completed: false, created, updated: created })
      await db('sub_tasks').insert({ id: 1, title: 'task', todoItemId: 1, created, updated: created })
    })

    it('are plain objects on every surface: REST list, get and export, GraphQL lists and relations', async () => {
      seen().length = 0
      const http = env.server.http
      assert.equal((await http('GET', '/todo-items')).status, 200)
      assert.equal((await http('GET', '/todo-items/1')).status, 200)
      assert.equal((await http('GET', '/todo-items/export')).status, 200)
      const response = await graphql(
        env.server,
        '{ todoItems { edges { node { id subTasks { edges { node { id } } } } } } todoItem(id: 1) { id } }'
      )
      assert.equal(response.errors, undefined)
      const calls = seen()
      // find (REST list, export, GraphQL list), get and the relation's find of sub tasks all ran hooks.
      assert.ok(calls.some((call) => call.path === 'todo-items' && call.method === 'get'))
      assert.ok(calls.some((call) => call.path === 'sub-tasks' && call.method === 'find'))
      assert.ok(calls.filter((call) => call.path === 'todo-items' && call.method === 'find').length >= 3)
      assert.deepEqual(
        calls.filter((call) => !call.plain),
        []
      )
    })
  },
  async (databaseUrl) => {
    const { app, db } = await createApp({ databaseUrl })
    const seen: Seen = []
    const record = (context: HookContext) => {
      const records = recordsOf(context.result)
      seen.push({
        path: context.path,
        method: context.method,
        plain: records.length > 0 && records.every(isPlain)
      })
    }
    for (const path of ['todo-items', 'sub-tasks'])
      app.service(path).hooks({ after: { find: [record], get: [record] } })
    Object.assign(app, { seen })
    return { app, db }
  }
)
