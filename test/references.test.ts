import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { accessToken, bearer, createAuthApp } from './support/auth-app'

forEachDatabase('References: a body may only point at records that exist', (env) => {
  beforeEach(() => clearTables(env.server.db))

  it('refuses a sub task under a todo item that does not exist, naming the field', async () => {
    const response = await env.server.http('POST', '/sub-tasks', { title: 'orphan', todoItemId: '424242' })
    assert.equal(response.status, 400)
    assert.deepEqual(
      response.body.errors.map((error: { field: string }) => error.field),
      ['body.todoItemId']
    )
    const [id] = await seedTodoItems(env.server.db, [{ title: 'parent' }])
    const created = await env.server.http('POST', '/sub-tasks', { title: 'child', todoItemId: String(id) })
    assert.equal(created.status, 201)
    const moved = await env.server.http('PATCH', `/sub-tasks/${created.body.id}`, { todoItemId: '424242' })
    assert.equal(moved.status, 400)
    assert.equal((await env.server.db('sub_tasks').first()).todoItemId, id)
  })
})

forEachDatabase(
  'References: a body may only point at records the caller may see',
  (env) => {
    it("refuses bob's sub task under ann's todo item, as if the item did not exist", async () => {
      const ann = bearer(await accessToken(env.server, 'ann'))
      const bob = bearer(await accessToken(env.server, 'bob'))
      const item = await env.server.http('POST', '/todo-items', { title: "ann's" }, ann)
      assert.equal(item.status, 201)
      const intruding = await env.server.http(
        'POST',
        '/sub-tasks',
        { title: 'x', todoItemId: String(item.body.id) },
        bob
      )
      assert.equal(intruding.status, 400)
      assert.deepEqual(
        intruding.body.errors.map((error: { field: string }) => error.field),
        ['body.todoItemId']
      )
      const missing = await env.server.http('POST', '/sub-tasks', { title: 'x', todoItemId: '999999' }, bob)
      assert.equal(missing.body.message, intruding.body.message.replace(String(item.body.id), '999999'))
      const own = await env.server.http(
        'POST',
        '/sub-tasks',
        { title: 'mine', todoItemId: String(item.body.id) },
        ann
      )
      assert.equal(own.status, 201)
      assert.equal(Number((await env.server.db('sub_tasks').count({ n: '*' }))[0].n), 1)
    })
  },
  createAuthApp
)
