import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import { defineResource, Field, FilterableField, IDField } from '../src'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'
import { exampleResourcesApp } from './support/example-resources-app'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'

/**
 * Sub tasks through a resource that checks less than the table does: its title may be null and its parent is
 * no relation the plugin checks. What the schema lets through, the database's NOT NULL and foreign key refuse,
 * and those refusals must reach the client as the 400s they are, not as 500s.
 */
const looseSubTaskResource = defineResource({
  name: 'LooseSubTask',
  table: 'sub_tasks',
  basePath: 'loose-sub-tasks',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    title: FilterableField(Type.String({ maxLength: 100 }), { nullable: true }),
    completed: Field(Type.Boolean({ default: false })),
    created: Field(Type.String({ format: 'date-time' })),
    updated: Field(Type.String({ format: 'date-time' })),
    todoItemId: FilterableField(Type.Integer())
  })
})

/** Sub tasks whose title is hidden: never written by clients, though the table requires one. */
const untitledSubTaskResource = defineResource({
  ...looseSubTaskResource,
  name: 'UntitledSubTask',
  basePath: 'untitled-sub-tasks',
  schema: Type.Object({
    ...looseSubTaskResource.schema.properties,
    title: Field(Type.String(), { nullable: true, hidden: true })
  })
})

/** Notes whose table checks that the body is longer than two characters; the schema does not. */
const checkedNoteResource = defineResource({
  name: 'CheckedNote',
  table: 'checked_notes',
  basePath: 'checked-notes',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    body: FilterableField(Type.String())
  })
})

const looseApp = exampleResourcesApp({
  quietErrors: true,
  // These schemas are looser than their tables on purpose, and checked_notes is made after start-up.
  plugin: { checkSchema: false },
  resources: [
    todoItemResource,
    subTaskResource,
    ...tagResources,
    looseSubTaskResource,
    untitledSubTaskResource,
    checkedNoteResource
  ]
})

forEachDatabase(
  'Database constraints: what only the table refuses is a 400',
  (env) => {
    let parent: number
    const at = '2026-01-01T00:00:00.000Z'
    before(async () => {
      await clearTables(env.server.db)
      ;[parent] = await seedTodoItems(env.server.db, [{ title: 'parent' }])
      await env.server.db.schema.createTable('checked_notes', (table) => {
        table.increments('id')
        table.string('body').notNullable()
        table.check('length(??) > 2', ['body'], 'body_longer_than_two')
      })
    })

    const subTasks = async () => env.server.db('sub_tasks').select('id')

    it('answers a NOT NULL violation with a 400 naming the column, and writes nothing', async () => {
      const response = await env.server.http('POST', '/loose-sub-tasks', {
        title: null,
        created: at,
        updated: at,
        todoItemId: parent
      })
      assert.equal(response.status, 400, response.text)
      assert.equal(response.body.name, 'BadRequest')
      assert.deepEqual(response.body.errors, [
        { field: 'body.title', message: 'must not be null (the column is NOT NULL)' }
      ])
      assert.deepEqual(await subTasks(), [])
    })

    it('does not name the column of a hidden field whose NOT NULL the write violates', async () => {
      const response = await env.server.http('POST', '/untitled-sub-tasks', {
        created: at,
        updated: at,
        todoItemId: parent
      })
      assert.equal(response.status, 400, response.text)
      assert.deepEqual(response.body.errors, [{ field: 'body', message: 'violates a database constraint' }])
      assert.ok(!response.text.includes('title'), response.text)
      assert.deepEqual(await subTasks(), [])
    })

    it('answers a foreign key violation with a 400, and writes nothing', async () => {
      const response = await env.server.http('POST', '/loose-sub-tasks', {
        title: 'orphan',
        created: at,
        updated: at,
        todoItemId: parent + 1000
      })
      assert.equal(response.status, 400, response.text)
      assert.equal(response.body.name, 'BadRequest')
      assert.match(response.body.message, /violates a database constraint/)
      assert.ok(!/insert into/i.test(response.text), 'no SQL in the answer')
      assert.deepEqual(await subTasks(), [])
      const fine = await env.server.http('POST', '/loose-sub-tasks', {
        title: 'child',
        created: at,
        updated: at,
        todoItemId: parent
      })
      assert.equal(fine.status, 201, fine.text)
    })

    it('answers a CHECK violation with a 400, and writes nothing', async () => {
      const response = await env.server.http('POST', '/checked-notes', { body: 'ab' })
      assert.equal(response.status, 400, response.text)
      assert.equal(response.body.name, 'BadRequest')
      assert.match(response.body.message, /violates a database constraint/)
      assert.deepEqual(await env.server.db('checked_notes').select('id'), [])
      const fine = await env.server.http('POST', '/checked-notes', { body: 'abc' })
      assert.equal(fine.status, 201, fine.text)
      const patched = await env.server.http('PATCH', `/checked-notes/${fine.body.id}`, { body: '' })
      assert.equal(patched.status, 400, patched.text)
      // Spread: the mysql driver's rows are RowDataPackets, which a strict comparison tells from objects.
      assert.deepEqual(
        (await env.server.db('checked_notes').select('body')).map((row) => ({ ...row })),
        [{ body: 'abc' }]
      )
    })
  },
  looseApp
)
