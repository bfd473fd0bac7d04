import { strict as assert } from 'node:assert'
import { Type } from '@sinclair/typebox'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../example/database'
import { ConfigurationError, defineResource, feathersQuery, Field, FilterableField, IDField } from '../src'
import { createTestDatabase, databaseNames, type TestDatabase } from './support/databases'
import { pluginApp } from './support/plugin-app'
import { freePort } from './support/free-port'
import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'

const gizmos = defineResource({
  name: 'Gizmo',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    name: FilterableField(Type.String({ maxLength: 50 })),
    weight: FilterableField(Type.Number(), { nullable: true }),
    color: Field(Type.String()),
    createdBy: Field(Type.String(), { hidden: true }),
    label: Field(Type.String()),
    partsCount: FilterableField(Type.Integer())
  }),
  computed: { label: (gizmo: { name: string }) => `#${gizmo.name}` },
  sqlComputed: {
    partsCount: ({ knex, column }) =>
      knex.raw('SELECT COUNT(*) FROM ?? WHERE ?? = ?', [
        'gizmo_parts as counted',
        'counted.gizmoId',
        column('id')
      ])
  },
  many: {
    parts: { resource: 'Part', through: { resource: 'GizmoPart', foreignKey: 'gizmoId', otherKey: 'partId' } }
  },
  delete: { useSoftDelete: true }
})

const parts = defineResource({
  name: 'Part',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    name: FilterableField(Type.String())
  })
})

const gizmoParts = defineResource({
  name: 'GizmoPart',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    gizmoId: FilterableField(Type.Integer()),
    partId: FilterableField(Type.Integer())
  })
})

const resources = [gizmos, parts, gizmoParts]

/** The tables the resources need: the computed fields have no column, the soft delete mark has one. */
async function createTables(db: Knex) {
  await db.schema.createTable('gizmos', (table) => {
    table.increments('id')
    table.string('name', 50).notNullable()
    table.double('weight').nullable()
    table.string('color').notNullable()
    table.string('createdBy').notNullable()
    table.datetime('deletedAt').nullable()
  })
  await db.schema.createTable('parts', (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  await db.schema.createTable('gizmo_parts', (table) => {
    table.increments('id')
    table.integer('gizmoId').unsigned().notNullable().references('gizmos.id')
    table.integer('partId').unsigned().notNullable().references('parts.id')
  })
}

/** The plugin's app over `db`, set up; `configuration` is the app's `feathersQuery` configuration. */
const setUp = (db: Knex, plugin: { checkSchema?: boolean } = {}, configuration?: object) => {
  const app = koa(feathers())
  if (configuration) app.set('feathersQuery', configuration)
  app.configure(feathersQuery({ Model: db, resources, ...plugin }))
  return app.setup()
}

for (const database of databaseNames) {
  describe(`The start-up check of the tables against the schemas [${database}]`, function () {
    this.timeout(60000)
    let testDatabase: TestDatabase
    let db: Knex

    beforeEach(async () => {
      testDatabase = await createTestDatabase(database)
      db = knex(knexConfig(testDatabase.url))
      await createTables(db)
    })
    afterEach(async () => {
      await db.destroy()
      await testDatabase.drop()
    })

    it('accepts tables with every stored column, leaving out computed fields, with hidden fields and the soft delete mark', async () => {
      await setUp(db)
    })

    it('fails setup naming every difference at once: resource, field, table, column and what differs', async () => {
      await db.schema.dropTable('gizmo_parts')
      await db.schema.dropTable('gizmos')
      await db.schema.createTable('gizmos', (table) => {
        table.increments('id')
        table.string('name', 20).notNullable()
        table.double('weight').notNullable()
        table.integer('color').notNullable()
      })

      const { app } = pluginApp(db, resources)
      const port = await freePort()
      await assert.rejects(app.listen(port), (error) => {
        assert.ok(error instanceof ConfigurationError)
        const lines = error.message.split('\n').filter((line) => line.startsWith('  - '))
        assert.deepEqual(lines.sort(), [
          '  - Gizmo (delete.softDeleteColumn): column gizmos.deletedAt is missing (missing)',
          `  - Gizmo.color: column gizmos.color is ${{ sqlite: 'integer', mysql: 'int(11)', postgres: 'integer' }[database]}, which does not hold string values (type)`,
          '  - Gizmo.createdBy: column gizmos.createdBy is missing (missing)',
          ...(database === 'sqlite'
            ? []
            : [
                `  - Gizmo.name: column gizmos.name is ${database === 'mysql' ? 'varchar(20)' : 'character varying(20)'}, shorter than the field's maxLength 50 (type)`
              ]),
          '  - Gizmo.weight: column gizmos.weight is NOT NULL, but the field may be null (nullability)',
          '  - GizmoPart: table gizmo_parts is missing'
        ])
        assert.match(error.message, /checkSchema: false/)
        return true
      })
      // The server app.listen opened before setup is closed: an app that failed its check serves nothing.
      const refused = fetch(`http://127.0.0.1:${port}/gizmos`, { signal: AbortSignal.timeout(2000) })
      await assert.rejects(refused, /fetch failed/)
    })

    it('refuses a date field over a text column, which would compare its dates as text', async () => {
      await db.schema.alterTable('gizmos', (table) => table.dropColumn('deletedAt'))
      await db.schema.alterTable('gizmos', (table) => table.text('deletedAt').nullable())
      await assert.rejects(
        setUp(db),
        /Gizmo \(delete.softDeleteColumn\): column gizmos.deletedAt is text(\(\d+\))?, which does not hold date values/
      )
    })

    if (database === 'postgres') {
      it('accepts a native enum type for a string field', async () => {
        await db.raw(`CREATE TYPE gizmo_color AS ENUM ('red', 'blue')`)
        await db.raw(`ALTER TABLE gizmos ALTER COLUMN color TYPE gizmo_color USING color::gizmo_color`)
        await setUp(db)
      })

      it('reads the table an unqualified name reaches: the first schema on the search path that has it', async () => {
        await db.raw('CREATE SCHEMA first_on_path')
        const onPath = knex({ ...knexConfig(testDatabase.url), searchPath: ['first_on_path', 'public'] })
        try {
          await setUp(onPath)
        } finally {
          await onPath.destroy()
        }
      })
    }

    it('is turned off by checkSchema: false, in code or in the configuration', async () => {
      await db.schema.dropTable('gizmo_parts')
      await assert.rejects(setUp(db), /GizmoPart: table gizmo_parts is missing/)
      await setUp(db, { checkSchema: false })
      await setUp(db, {}, { checkSchema: false })
    })

    it('reads the catalog in one statement for every table and column', async () => {
      const statements = async (checkSchema: boolean) => {
        const sql: string[] = []
        const record = (query: { sql: string }) => sql.push(query.sql)
        db.on('query', record)
        await setUp(db, { checkSchema })
        db.off('query', record)
        return sql
      }
      // What the first setup of a knex instance reads once (MySQL's indexes) is read before counting.
      await statements(false)
      const unchecked = await statements(false)
      const checked = await statements(true)
      const catalog = checked.filter((sql) => !unchecked.includes(sql))
      assert.equal(catalog.length, 1, checked.join('\n'))
      assert.equal(checked.length, unchecked.length + 1, checked.join('\n'))
    })
  })
}
