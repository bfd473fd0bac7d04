import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { defineResource, FilterableField, IDField } from '../src'
import { knexConfig, type Drivers } from '../example/database'
import { databaseNames, type DatabaseName } from './support/databases'
import { graphql } from './support/graphql'
import { pluginApp } from './support/plugin-app'
import { serverOn } from './support/server'

/**
 * A resource that checks less than its table: no maxLength, no integer range, a nullable body, a plain
 * reference and a code the schema does not know is unique. What only the table refuses must reach the client
 * naming the field and the rule broken, on every driver, and reach the log with the driver's own message.
 */
const limitedNoteResource = defineResource({
  name: 'LimitedNote',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    body: FilterableField(Type.String(), { nullable: true }),
    n: FilterableField(Type.Integer(), { nullable: true }),
    code: FilterableField(Type.String(), { nullable: true }),
    parentId: FilterableField(Type.Integer(), { nullable: true })
  })
})

/** The same table through a resource that leaves its NOT NULL body out: no field of it to name. */
const unbodiedNoteResource = defineResource({
  name: 'UnbodiedNote',
  table: 'limited_notes',
  basePath: 'unbodied-notes',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    code: FilterableField(Type.String(), { nullable: true })
  })
})

const limitedParentResource = defineResource({
  name: 'LimitedParent',
  table: 'limited_parents',
  basePath: 'limited-parents',
  schema: Type.Object({ id: IDField(Type.Integer({ readOnly: true })) })
})

/** What the plugin logs, by level: a server's failure at error, a client's refusal at warn. */
const logged: string[] = []
const warned: string[] = []
const logger = {
  error: (message: string) => logged.push(message),
  warn: (message: string) => warned.push(message)
}

const limitedApp = (drivers: Drivers) => async (databaseUrl: string) => {
  const db = knex(knexConfig(databaseUrl, drivers))
  await db.schema.createTable('limited_parents', (table) => table.increments('id'))
  await db.schema.createTable('limited_notes', (table) => {
    table.increments('id')
    table.string('body', 10).notNullable()
    table.integer('n')
    table.string('code', 20).unique()
    table.integer('parentId').unsigned().references('limited_parents.id')
  })
  return pluginApp(db, [limitedNoteResource, unbodiedNoteResource, limitedParentResource], {
    quietErrors: false,
    // The start-up check would refuse the loose schema: this suite is about what reaches the table.
    plugin: {
      checkSchema: false,
      logger
    }
  })
}

/** Each database on each of its drivers: the suite's, and the Feathers CLI's (node-sqlite3, mysql). */
type Case = { database: DatabaseName; driver: string; drivers: Drivers }
const cases: Case[] = databaseNames.flatMap((database): Case[] => {
  const suite: Drivers = { sqlite: 'better-sqlite3', mysql: 'mysql2' }
  const cli: Drivers = { sqlite: 'sqlite3', mysql: 'mysql' }
  if (database === 'sqlite') {
    return [suite, cli].map((drivers) => ({ database, driver: drivers.sqlite, drivers }))
  }
  if (database === 'mysql')
    return [suite, cli].map((drivers) => ({ database, driver: drivers.mysql, drivers }))
  return [{ database, driver: 'pg', drivers: suite }]
})

for (const { database, driver, drivers } of cases) {
  describe(`Constraint errors name the field and the rule [${database} on ${driver}]`, function () {
    const env = serverOn(database, limitedApp(drivers))
    const post = (body: Record<string, unknown>) => env.server.http('POST', '/limited-notes', body)
    const written = async () => (await env.server.db('limited_notes').select('body')).map((row) => row.body)

    beforeEach(async () => {
      await env.server.db('limited_notes').delete()
      logged.length = 0
      warned.length = 0
    })

    it('a null for a NOT NULL column: the field, and the rule', async () => {
      const response = await post({ body: null })
      assert.equal(response.status, 400, response.text)
      assert.deepEqual(response.body.errors, [
        { field: 'body.body', message: 'must not be null (the column is NOT NULL)' }
      ])
      assert.match(response.body.message, /violates a database constraint: body must not be null/)
      assert.deepEqual(await written(), [])
    })

    it('a text longer than its varchar: the field and the limit where the database checks it', async () => {
      const response = await post({ body: 'x'.repeat(300) })
      if (database === 'sqlite') {
        // SQLite keeps the declared length as a hint only: the text is stored whole.
        assert.equal(response.status, 201, response.text)
        return
      }
      assert.equal(response.status, 400, response.text)
      const message =
        database === 'postgres'
          ? "must have at most 10 characters (the column's length)"
          : 'is longer than its column allows'
      assert.deepEqual(response.body.errors, [{ field: 'body.body', message }])
      assert.deepEqual(await written(), [])
    })

    it('an integer past the column type: the field, and the range', async () => {
      const response = await post({ body: 'big', n: 2 ** 40 })
      if (database === 'sqlite') {
        assert.equal(response.status, 201, response.text)
        return
      }
      assert.equal(response.status, 400, response.text)
      const message =
        database === 'postgres'
          ? "is out of range for the column's type (integer)"
          : "is out of range for the column's type"
      assert.deepEqual(response.body.errors, [{ field: 'body.n', message }])
    })

    it('a reference to no record: the foreign key, and its field where the driver names it', async () => {
      const response = await post({ body: 'orphan', parentId: 999 })
      assert.equal(response.status, 400, response.text)
      // SQLite says a foreign key failed, not which.
      const field = database === 'sqlite' ? 'body' : 'body.parentId'
      assert.deepEqual(response.body.errors, [
        { field, message: 'must name an existing record (foreign key)' }
      ])
    })

    it('a unique value taken: a 409 naming the field', async () => {
      assert.equal((await post({ body: 'first', code: 'same' })).status, 201)
      const response = await post({ body: 'second', code: 'same' })
      assert.equal(response.status, 409, response.text)
      assert.equal(response.body.message, 'A record with the same code exists')
      assert.deepEqual(response.body.errors, [
        { field: 'body.code', message: 'must be unique: a record with this value exists' }
      ])
    })

    it("logs the driver's message as the cause of a 400, below error level, out of the response", async () => {
      const response = await post({ body: null })
      assert.equal(response.status, 400)
      assert.doesNotMatch(response.text, /Caused by|insert into|constraint failed|cannot be null|null value/i)
      assert.deepEqual(logged, [])
      assert.equal(warned.length, 1, warned.join('\n'))
      assert.match(warned[0], /^BadRequest: The data violates a database constraint/)
      assert.match(
        warned[0],
        /\nCaused by: .*(NOT NULL constraint failed: limited_notes\.body|Column 'body' cannot be null|null value in column "body")/
      )
    })

    it('logs a unique value taken without the statement or the value', async () => {
      assert.equal((await post({ body: 'first', code: 'taken-code-77' })).status, 201)
      const response = await post({ body: 'second', code: 'taken-code-77' })
      assert.equal(response.status, 409, response.text)
      assert.deepEqual(logged, [])
      assert.equal(warned.length, 1, warned.join('\n'))
      assert.match(warned[0], /\nCaused by: /)
      assert.doesNotMatch(warned[0], /insert into|taken-code-77|second/i)
    })

    it('does not name a column that is no field of the resource', async () => {
      const response = await env.server.http('POST', '/unbodied-notes', { code: 'c' })
      assert.equal(response.status, 400, response.text)
      assert.equal(response.body.message, 'The data violates a database constraint')
      assert.deepEqual(response.body.errors, [{ field: 'body', message: 'violates a database constraint' }])
      assert.deepEqual(await written(), [])
    })

    it('refuses to delete a record still referenced, on its id, on every database', async () => {
      await env.server.db('limited_parents').insert({})
      const { parentId } = (await env.server.db('limited_parents').max('id as parentId').first()) as {
        parentId: number
      }
      assert.equal((await post({ body: 'child', parentId })).status, 201)
      const response = await env.server.http('DELETE', `/limited-parents/${parentId}`)
      assert.equal(response.status, 400, response.text)
      assert.deepEqual(response.body.errors, [
        { field: 'id', message: 'is still referenced by records of another table (foreign key)' }
      ])
      assert.match(response.body.message, /the record is still referenced/)
    })

    it('names the mutation input field over GraphQL, and logs the cause there too', async () => {
      const response = await graphql(
        env.server,
        'mutation { createOneLimitedNote(input: { limitedNote: { body: null } }) { id } }'
      )
      assert.equal(response.errors?.[0].extensions.code, 'BAD_USER_INPUT')
      assert.deepEqual(response.errors?.[0].extensions.errors, [
        { field: 'input.limitedNote.body', message: 'must not be null (the column is NOT NULL)' }
      ])
      assert.doesNotMatch(JSON.stringify(response), /Caused by|insert into/i)
      // A client's refusal, as over REST: at warn, nothing at error.
      assert.deepEqual(logged, [])
      assert.equal(warned.length, 1, warned.join('\n'))
      assert.match(warned[0], /\nCaused by: /)
    })
  })
}
