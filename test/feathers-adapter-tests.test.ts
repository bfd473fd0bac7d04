import { adapterTests, type AdapterTestName } from '@feathersjs/adapter-tests'
import { feathers } from '@feathersjs/feathers'
import { koa, type Application } from '@feathersjs/koa'
import { Type } from '@sinclair/typebox'
import knex, { type Knex } from 'knex'
import { defineResource, feathersQuery, FilterableField, IDField, type ResourceService } from '../src'
import { knexConfig } from '../example/database'
import { createTestDatabase, databaseNames, type TestDatabase } from './support/databases'

/**
 * Feathers' own conformance suite for database adapters (@feathersjs/adapter-tests, which @feathersjs/knex
 * runs too), against a resource service, on every database. The service is configured as the suite expects
 * an adapter to be, as @feathersjs/knex's own test configures its service: no pagination until a test sets
 * `service.options.paginate`, `multi` off until a test sets `service.options.multi`, and update replacing
 * the record (`update.replace`). Every test of the suite is run: none is left out.
 */
const PASSING: AdapterTestName[] = [
  '.options',
  '.events',
  '._get',
  '._find',
  '._create',
  '._update',
  '._patch',
  '._remove',
  '.get',
  '.get + $select',
  '.get + id + query',
  '.get + NotFound',
  '.get + NotFound (integer)',
  '.get + id + query id',
  '.find',
  '.remove',
  '.remove + $select',
  '.remove + id + query',
  '.remove + NotFound',
  '.remove + NotFound (integer)',
  '.remove + multi',
  '.remove + multi no pagination',
  '.remove + id + query id',
  '.update',
  '.update + $select',
  '.update + id + query',
  '.update + NotFound',
  '.update + NotFound (integer)',
  '.update + query + NotFound',
  '.update + id + query id',
  '.patch',
  '.patch + $select',
  '.patch + id + query',
  '.patch multiple',
  '.patch multiple no pagination',
  '.patch multi query same',
  '.patch multi query changed',
  '.patch + NotFound',
  '.patch + NotFound (integer)',
  '.patch + query + NotFound',
  '.patch + id + query id',
  '.create',
  '.create ignores query',
  '.create + $select',
  '.create multi',
  'internal .find',
  'internal .get',
  'internal .create',
  'internal .update',
  'internal .patch',
  'internal .remove',
  '.find + equal',
  '.find + equal multiple',
  '.find + $sort',
  '.find + $sort + string',
  '.find + $limit',
  '.find + $limit 0',
  '.find + $skip',
  '.find + $select',
  '.find + $or',
  '.find + $in',
  '.find + $nin',
  '.find + $lt',
  '.find + $lte',
  '.find + $gt',
  '.find + $gte',
  '.find + $ne',
  '.find + $gt + $lt + $sort',
  '.find + $or nested + $sort',
  '.find + $and',
  '.find + $and + $or',
  'params.adapter + paginate',
  'params.adapter + multi',
  '.find + paginate',
  '.find + paginate + query',
  '.find + paginate + $limit + $skip',
  '.find + paginate + $limit 0',
  '.find + paginate + params'
]

const people = defineResource({
  name: 'Person',
  basePath: 'people',
  table: 'people',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    name: FilterableField(Type.String()),
    age: FilterableField(Type.Integer(), { nullable: true }),
    created: FilterableField(Type.Boolean(), { nullable: true })
  }),
  events: ['testing'],
  // Feathers' update replaces the record; the spec's PUT (the default) changes only what the body names.
  update: { replace: true }
})

for (const database of databaseNames) {
  describe(`Feathers adapter tests on a resource service [${database}]`, function () {
    this.timeout(60000)
    const app: Application = koa(feathers())
    let testDatabase: TestDatabase
    let db: Knex

    before(async () => {
      testDatabase = await createTestDatabase(database)
      db = knex(knexConfig(testDatabase.url))
      await db.schema.createTable('people', (table) => {
        table.increments('id')
        table.string('name').notNullable()
        table.integer('age')
        table.boolean('created')
      })
      app.configure(feathersQuery({ Model: db, resources: [people], graphql: false, openapi: false }))
      const service = app.service('people') as unknown as ResourceService
      service.options.paginate = false
      await app.setup()
    })

    after(async () => {
      await db?.destroy()
      await testDatabase?.drop()
    })

    adapterTests(PASSING)(app, {}, 'people', 'id')
  })
}
