import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa } from '@feathersjs/koa'
// A Feathers CLI app's `Type`: @feathersjs/typebox brings TypeBox 0.25 (its own copy here, beside our 0.34).
import { Type as Type025, type Static as Static025 } from '@feathersjs/typebox'
import { Type as Type034, type Static as Static034 } from '@sinclair/typebox'
import knex from 'knex'
import { defineResource, errorHandler, feathersQuery, Field, FilterableField, IDField } from 'feathers-query'
import { knexConfig } from '../example/database'
import { forEachDatabase } from './support/server'
import { graphql } from './support/graphql'

/** The same resource written with each TypeBox version's `Type`. */
const noteSchema025 = Type025.Object({
  id: IDField(Type025.Integer({ readOnly: true })),
  title: FilterableField(Type025.String({ minLength: 1 })),
  body: FilterableField(Type025.String(), { nullable: true }),
  due: FilterableField(Type025.String({ format: 'date-time' }), { nullable: true }),
  secret: Field(Type025.String(), { nullable: true, hidden: true }),
  rank: Field(Type025.Integer({ default: 1 }))
})

const noteSchema034 = Type034.Object({
  id: IDField(Type034.Integer({ readOnly: true })),
  title: FilterableField(Type034.String({ minLength: 1 })),
  body: FilterableField(Type034.String(), { nullable: true }),
  due: FilterableField(Type034.String({ format: 'date-time' }), { nullable: true }),
  secret: Field(Type034.String(), { nullable: true, hidden: true }),
  rank: Field(Type034.Integer({ default: 1 }))
})

// Each version's `Static` reads the annotated schema: nullable fields admit null, the others do not.
const note025: Static025<typeof noteSchema025> = {
  id: 1,
  title: 't',
  body: null,
  due: null,
  secret: null,
  rank: 1
}
const note034: Static034<typeof noteSchema034> = {
  id: 1,
  title: 't',
  body: null,
  due: null,
  secret: null,
  rank: 1
}
// @ts-expect-error title is not nullable
const untitled025: Static025<typeof noteSchema025> = { ...note025, title: null }
// @ts-expect-error title is not nullable
const untitled034: Static034<typeof noteSchema034> = { ...note034, title: null }
void untitled025
void untitled034

const versions = [
  {
    version: '0.25',
    name: 'NoteA',
    path: 'notes-a',
    plural: 'noteAs',
    table: 'notes_a',
    schema: noteSchema025
  },
  {
    version: '0.34',
    name: 'NoteB',
    path: 'notes-b',
    plural: 'noteBs',
    table: 'notes_b',
    schema: noteSchema034
  }
]

async function createNotesApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  for (const { table } of versions) {
    await db.schema.createTable(table, (columns) => {
      columns.increments('id')
      columns.string('title').notNullable()
      columns.string('body').nullable()
      columns.datetime('due', { precision: 3 }).nullable()
      columns.string('secret').nullable()
      columns.integer('rank').notNullable()
    })
  }
  const app = koa(feathers())
  app.use(errorHandler(() => {}))
  app.use(bodyParser())
  const resources = versions.map(({ name, path, table, schema }) =>
    defineResource({ name, basePath: path, table, schema })
  )
  app.configure(feathersQuery({ Model: db, resources }))
  return { app, db }
}

forEachDatabase(
  'Schemas written with TypeBox 0.25 (@feathersjs/typebox) and 0.34 behave alike',
  (env) => {
    for (const { version, name, path, plural } of versions) {
      it(`TypeBox ${version}: nullable fields may be left out or null, others are required and typed`, async () => {
        const { http } = env.server
        const plain = await http('POST', `/${path}`, { title: 'plain' })
        assert.equal(plain.status, 201)
        assert.deepEqual(plain.body, { id: plain.body.id, title: 'plain', body: null, due: null, rank: 1 })
        const full = await http('POST', `/${path}`, {
          title: 'full',
          body: null,
          due: '2026-05-01T10:00:00.000Z',
          secret: undefined
        })
        assert.equal(full.status, 201)
        assert.equal(full.body.due, '2026-05-01T10:00:00.000Z')
        const untitled = await http('POST', `/${path}`, { body: 'no title' })
        assert.equal(untitled.status, 400)
        assert.deepEqual(untitled.body.errors, [{ field: 'body.title', message: 'is required' }])
        const mistyped = await http('POST', `/${path}`, { title: 'x', due: 'tomorrow' })
        assert.equal(mistyped.status, 400)
        assert.equal(mistyped.body.errors[0].field, 'body.due')
        const hidden = await http('POST', `/${path}`, { title: 'x', secret: 's' })
        assert.equal(hidden.status, 400, 'a hidden field is not written by clients')
      })

      it(`TypeBox ${version}: GraphQL types nullable fields as nullable and filters on them`, async () => {
        const { server } = env
        const type = await graphql(
          server,
          `{ __type(name: "${name}") { fields { name type { kind name } } } }`
        )
        const kinds = Object.fromEntries(
          type.data.__type.fields.map(
            (field: { name: string; type: { kind: string; name: string | null } }) => [
              field.name,
              field.type.kind === 'NON_NULL' ? 'NON_NULL' : field.type.name
            ]
          )
        )
        assert.deepEqual(kinds, {
          id: 'NON_NULL',
          title: 'NON_NULL',
          body: 'String',
          due: 'DateTime',
          rank: 'NON_NULL'
        })
        const dated = await graphql(
          server,
          `{ ${plural}(filter: { due: { isNot: null } }) { edges { node { title due } } } }`
        )
        assert.deepEqual(dated.data[plural].edges, [
          { node: { title: 'full', due: '2026-05-01T10:00:00.000Z' } }
        ])
      })
    }

    it('gives both versions the same OpenAPI schemas', async () => {
      const document = (await env.server.http('GET', '/openapi.json')).body
      const schemas = document.components.schemas
      for (const suffix of ['', 'Create', 'Update']) {
        const [a, b] = [schemas[`NoteA${suffix}`], schemas[`NoteB${suffix}`]]
        assert.ok(a && b, `NoteA${suffix} and NoteB${suffix}`)
        assert.deepEqual({ ...a, title: undefined }, { ...b, title: undefined })
      }
      assert.deepEqual(schemas.NoteACreate.required, ['title'])
    })
  },
  createNotesApp
)
