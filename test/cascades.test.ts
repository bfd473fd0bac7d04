import assert from 'node:assert/strict'
import { accessToken, bearer, createAuthApp } from './support/auth-app'
import { graphql } from './support/graphql'
import { clearTables, seedTodoItems } from './support/seed'
import { forEachDatabase } from './support/server'

/**
 * The example's migrations remove a todo item's sub-tasks with it (ON DELETE CASCADE); each user may remove
 * only their own records (`authorize`). Removing your record never takes another user's child with it.
 */
forEachDatabase(
  "Cascades: a remove never takes another user's records",
  (env) => {
    let ann: Record<string, string>
    let bob: Record<string, string>
    before(async () => {
      ann = bearer(await accessToken(env.server, 'ann'))
      bob = bearer(await accessToken(env.server, 'bob'))
    })
    beforeEach(() => clearTables(env.server.db))

    const subTask = (todoItemId: number, title: string, createdBy: string) => ({
      todoItemId,
      title,
      completed: false,
      created: new Date('2026-01-01T00:00:00Z'),
      updated: new Date('2026-01-01T00:00:00Z'),
      createdBy
    })

    it('refuses to remove a parent with a child its caller may not remove (403), and removes nothing', async () => {
      const [item] = await seedTodoItems(env.server.db, [{ title: "Ann's", createdBy: 'ann' }])
      await env.server
        .db('sub_tasks')
        .insert([subTask(item, 'ann child', 'ann'), subTask(item, 'bob child', 'bob')])
      const refused = await env.server.http('DELETE', `/todo-items/${item}`, undefined, ann)
      assert.equal(refused.status, 403, refused.text)
      assert.match(refused.body.message, /1 SubTask records of subTasks are not yours to remove/)
      assert.equal((await env.server.db('todo_items').where('id', item)).length, 1)
      assert.equal((await env.server.db('sub_tasks').where('todoItemId', item)).length, 2)
      // A multi remove by query likewise, and GraphQL's deleteOne.
      const annAsCaller = { query: { id: item }, user: { id: 'ann' } }
      await assert.rejects(env.server.app.service('todo-items').remove(null, annAsCaller), (error: any) => {
        assert.equal(error.code, 403)
        return true
      })
      const deleteOne = await graphql(
        env.server,
        `mutation { deleteOneTodoItem(input: { id: ${item} }) { id } }`,
        undefined,
        ann
      )
      assert.equal(deleteOne.errors?.[0]?.extensions?.code, 'FORBIDDEN', JSON.stringify(deleteOne.errors))
      assert.equal((await env.server.db('sub_tasks').where('todoItemId', item)).length, 2)

      // Once Bob removed his own child, Ann's remove goes through and takes her own child with it.
      const [bobChild] = await env.server.db('sub_tasks').where('createdBy', 'bob').pluck('id')
      assert.equal((await env.server.http('DELETE', `/sub-tasks/${bobChild}`, undefined, bob)).status, 200)
      const removed = await env.server.http('DELETE', `/todo-items/${item}`, undefined, ann)
      assert.equal(removed.status, 200, removed.text)
      assert.deepEqual(await env.server.db('sub_tasks').where('todoItemId', item), [])
    })
  },
  createAuthApp
)
