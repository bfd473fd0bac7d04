import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedLinks, seedSubTasks, seedTags, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'
import { relationApp } from './support/relation-app'

const ADMIN = { 'x-role': 'admin' }

forEachDatabase(
  'Relation filters and many-to-many reads: authorize, guards and soft delete of the related side',
  (env) => {
    before(async function () {
      this.timeout(60000)
      const { db } = env.server
      await clearTables(db)
      const [alpha, bravo, charlie] = await seedTodoItems(db, [
        { title: 'alpha' },
        { title: 'bravo' },
        { title: 'charlie' }
      ])
      const [, , deletedTask] = await seedSubTasks(db, [
        { todoItemId: alpha, title: 'secret-a' },
        { todoItemId: bravo, title: 'b1' },
        { todoItemId: charlie, title: 'c1' },
        { todoItemId: alpha, title: 'a2', completed: true }
      ])
      await db('sub_tasks').where({ id: deletedTask }).update({ deletedAt: new Date() })
      const [secret, home, gone] = await seedTags(db, ['secret-t', 'home', 'gone'])
      await db('tags').where({ id: gone }).update({ deletedAt: new Date() })
      await seedLinks(db, [
        [alpha, secret],
        [bravo, home],
        [charlie, gone],
        [charlie, home]
      ])
      await db('todo_item_tags').where({ todoItemId: charlie, tagId: home }).update({ deletedAt: new Date() })
    })

    const titlesOf = async (filter: string, headers: Record<string, string> = {}) => {
      const response = await graphql(
        env.server,
        `{ todoItems(filter: ${filter}, sorting: [{ field: title, direction: ASC }]) { totalCount edges { node { title } } } }`,
        undefined,
        headers
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const { totalCount, edges } = response.data.todoItems
      assert.equal(totalCount, edges.length)
      return edges.map((edge: any) => edge.node.title)
    }

    it("a parent whose only matching child is hidden by the child resource's authorize does not match", async () => {
      const open = '{ subTasks: { completed: { is: false } } }'
      assert.deepEqual(await titlesOf(open), ['bravo'])
      assert.deepEqual(await titlesOf(open, ADMIN), ['alpha', 'bravo'])
      // Nothing about the hidden child leaks through its fields either.
      assert.deepEqual(await titlesOf('{ subTasks: { title: { like: "secret%" } } }'), [])
      assert.deepEqual(await titlesOf('{ subTasks: { title: { like: "secret%" } } }', ADMIN), ['alpha'])
    })

    it('soft-deleted children, related records and links do not count', async () => {
      assert.deepEqual(await titlesOf('{ subTasks: { title: { eq: "c1" } } }', ADMIN), [])
      assert.deepEqual(await titlesOf('{ tags: {} }', ADMIN), ['alpha', 'bravo'])
      assert.deepEqual(await titlesOf('{ tags: { name: { eq: "gone" } } }', ADMIN), [])
    })

    it("many-to-many filters apply the related and the join resource's authorize", async () => {
      assert.deepEqual(await titlesOf('{ tags: {} }'), ['bravo'])
      // The join resource hides the links to "home" (its authorize filters by its own relation).
      assert.deepEqual(await titlesOf('{ tags: {} }', { 'x-hidden-tag': 'home' }), [])
      assert.deepEqual(await titlesOf('{ tags: {} }', { ...ADMIN, 'x-hidden-tag': 'home' }), ['alpha'])
    })

    it('in aggregates the same', async () => {
      const query = `{ todoItemAggregate(filter: { subTasks: { completed: { is: false } } }) { count { id } } }`
      const user = await graphql(env.server, query)
      const admin = await graphql(env.server, query, undefined, ADMIN)
      assert.deepEqual(user.data.todoItemAggregate, [{ count: { id: 1 } }])
      assert.deepEqual(admin.data.todoItemAggregate, [{ count: { id: 2 } }])
    })

    it('many-to-many loads and relation aggregates leave out hidden and soft-deleted records and links', async () => {
      const query = `{ todoItems(sorting: [{ field: title, direction: ASC }]) { edges { node { title
          tags { totalCount edges { node { name } } } tagsAggregate { count { id } } } } } }`
      const tagsOf = (response: any) =>
        response.data.todoItems.edges.map((edge: any) => [
          edge.node.title,
          edge.node.tags.edges.map((tag: any) => tag.node.name),
          edge.node.tags.totalCount,
          edge.node.tagsAggregate[0].count.id
        ])
      assert.deepEqual(tagsOf(await graphql(env.server, query)), [
        ['alpha', [], 0, 0],
        ['bravo', ['home'], 1, 1],
        ['charlie', [], 0, 0]
      ])
      assert.deepEqual(tagsOf(await graphql(env.server, query, undefined, ADMIN)), [
        ['alpha', ['secret-t'], 1, 1],
        ['bravo', ['home'], 1, 1],
        ['charlie', [], 0, 0]
      ])
      assert.deepEqual(tagsOf(await graphql(env.server, query, undefined, { 'x-hidden-tag': 'home' })), [
        ['alpha', [], 0, 0],
        ['bravo', [], 0, 0],
        ['charlie', [], 0, 0]
      ])
    })

    it("the related resource's read guards run: a guard refusing its reads refuses filtering by it", async () => {
      const response = await graphql(
        env.server,
        '{ todoItems(filter: { tags: {} }) { totalCount } }',
        undefined,
        {
          'x-no-tags': 'yes'
        }
      )
      assert.deepEqual(codes(response), ['FORBIDDEN'])
      // Feathers callers alike (this app has no Feathers REST transport: through the service).
      await assert.rejects(
        (env.server.app.service('todo-items') as any).find({
          query: { tags: { name: 'home' } },
          provider: 'rest',
          headers: { 'x-no-tags': 'yes' }
        }),
        { name: 'Forbidden', message: 'No tags for you' }
      )
    })

    it('a relation is not filterable unless declared so', async () => {
      const response = await graphql(env.server, '{ tags(filter: { todoItems: {} }) { totalCount } }')
      assert.deepEqual(codes(response), ['GRAPHQL_VALIDATION_FAILED'])
      assert.match(response.errors![0].message, /Field "todoItems" is not defined by type "TagFilter"/)
      await assert.rejects(
        (env.server.app.service('tags') as any).find({ query: { todoItems: { title: 'alpha' } } }),
        {
          name: 'BadRequest',
          errors: [{ field: 'todoItems', message: 'Tag has no filterable field "todoItems"' }]
        }
      )
    })
  },
  relationApp
)
