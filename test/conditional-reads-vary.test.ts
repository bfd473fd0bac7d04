import assert from 'node:assert/strict'
import type { Context, Next } from 'koa'
import { createApp } from '../example/app'
import { forEachDatabase, type AppFactory } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'

const varied = (response: Response) =>
  (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase())

/** The example app with a middleware first that varies its answers by `Origin`, as CORS middleware does. */
const corsLikeApp: AppFactory = async (databaseUrl) => {
  const made = await createApp({ databaseUrl })
  ;(made.app as unknown as { middleware: unknown[] }).middleware.unshift((ctx: Context, next: Next) => {
    if (ctx.get('x-vary-origin')) ctx.vary('Origin')
    return next()
  })
  return made
}

/**
 * A tagged read's `Vary` names who asks and in which form (`Accept`, `Authorization`, `Cookie`) and every
 * header its tag hashes, each once whatever its case, after what the application's middleware named.
 */
forEachDatabase(
  'Conditional reads: Vary',
  (env) => {
    let id: number
    before(async () => {
      await clearTables(env.server.db)
      id = (await seedTodoItems(env.server.db, [{ title: 'one' }]))[0]
    })

    it('names each header once, the ones a request carries too', async () => {
      for (const path of [
        `/todo-items/${id}`,
        '/todo-items',
        '/graphql?query=%7BtodoItems%7BtotalCount%7D%7D'
      ]) {
        const response = await fetch(env.server.baseUrl + path, {
          headers: { accept: 'application/json', authorization: '', 'x-extra': '1', cookie: 'a=b' }
        })
        assert.equal(response.status, 200, path)
        const names = varied(response)
        assert.deepEqual(names.slice(0, 3), ['accept', 'authorization', 'cookie'], path)
        assert.equal(new Set(names).size, names.length, `${path}: ${names.join(', ')}`)
        assert.ok(names.includes('x-extra'), path)
      }
    })

    it("keeps the application's own Vary and adds to it", async () => {
      const response = await fetch(`${env.server.baseUrl}/todo-items/${id}`, {
        headers: { 'x-vary-origin': '1', accept: 'application/json' }
      })
      const names = varied(response)
      assert.equal(names[0], 'origin', names.join(', '))
      assert.ok(names.includes('accept') && names.includes('x-vary-origin'), names.join(', '))
      assert.equal(new Set(names).size, names.length, names.join(', '))
    })
  },
  corsLikeApp
)
