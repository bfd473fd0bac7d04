import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import socketioClient from '@feathersjs/socketio-client'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { io } from 'socket.io-client'
import { defineResource, FilterableField, Field, IDField, QUERY_SYNTAX_HEADER } from '../src'
import { resourceClient } from '../src/client'
import { knexConfig } from '../example/database'
import { codes, graphql } from './support/graphql'
import { pluginApp } from './support/plugin-app'
import { forEachDatabase } from './support/server'
import { createTestDatabase, databaseNames } from './support/databases'
import { koa } from '@feathersjs/koa'
import { graphqlWsClient } from './support/graphql-ws'
import { ConfigurationError, feathersQuery } from '../src'

/** A caller's team is its `x-team` header; `authorize` keeps each team to its own contacts. */
const teamOf = (params: { headers?: Record<string, unknown> }) => params.headers?.['x-team'] as string

const contacts = defineResource({
  name: 'Contact',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    email: FilterableField(Type.String({ minLength: 3 })),
    name: FilterableField(Type.String()),
    phone: FilterableField(Type.String()),
    score: FilterableField(Type.Integer(), { default: 7 }),
    team: FilterableField(Type.String()),
    // Unique too, but not the upsert key: taking another record's handle is a conflict, never a change of it.
    handle: FilterableField(Type.String(), { nullable: true })
  }),
  upsert: { key: ['email'] },
  multi: ['create'],
  authorize: (context) => {
    const team = teamOf(context.params)
    return team ? { team: { eq: team } } : undefined
  },
  // Staff do not read phone numbers.
  fieldRules: (params) => (params.headers?.['x-role'] === 'staff' ? { phone: { read: false } } : undefined)
})

/** Known by serial number, versioned: an upsert that changes a device gives it its next version. */
const devices = defineResource({
  name: 'Device',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    serial: FilterableField(Type.String()),
    state: FilterableField(Type.String()),
    version: FilterableField(Type.Integer({ readOnly: true }))
  }),
  upsert: { key: ['serial'] },
  concurrency: { version: 'version', required: true },
  delete: { useSoftDelete: true }
})

/** Without a key: no upsert anywhere. */
const notes = defineResource({
  name: 'Note',
  schema: Type.Object({ id: IDField(Type.Integer({ readOnly: true })), text: Field(Type.String()) })
})

async function upsertApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('contacts', (columns) => {
    columns.increments('id')
    columns.string('email').notNullable().unique()
    columns.string('name').notNullable()
    columns.string('phone').notNullable()
    columns.integer('score').notNullable()
    columns.string('team').notNullable()
    columns.string('handle').nullable().unique()
  })
  await db.schema.createTable('devices', (columns) => {
    columns.increments('id')
    columns.string('serial').notNullable().unique()
    columns.string('state').notNullable()
    columns.integer('version').notNullable()
    columns.datetime('deletedAt').nullable()
  })
  await db.schema.createTable('notes', (columns) => {
    columns.increments('id')
    columns.string('text').notNullable()
  })
  await db('contacts').insert([
    { email: 'ann@x.org', name: 'Ann', phone: '1', score: 1, team: 'red', handle: 'ann' },
    { email: 'bob@x.org', name: 'Bob', phone: '2', score: 2, team: 'blue', handle: 'bob' }
  ])
  const made = pluginApp(db, [contacts, devices, notes], { transports: true })
  made.app.on('connection', (connection) => made.app.channel('everyone').join(connection))
  made.app.publish(() => made.app.channel('everyone'))
  return made
}

const RED = { 'x-team': 'red' }
const MERGE = { prefer: 'resolution=merge-duplicates' }
const FEATHERS = { [QUERY_SYNTAX_HEADER]: 'feathers' }

forEachDatabase(
  'Upsert by a unique key',
  (env) => {
    const service = () =>
      env.server.app.service('contacts') as unknown as {
        upsert(data: unknown, params?: unknown): Promise<any>
        on(event: string, listener: (record: any) => void): void
        removeListener(event: string, listener: (record: any) => void): void
      }
    const rows = () => env.server.db('contacts').orderBy('id')

    /** The events the service sends while `work` runs, as `[event, email]`. */
    async function eventsOf(work: () => Promise<unknown>) {
      const heard: Array<[string, string]> = []
      const listeners = ['created', 'patched', 'updated'].map((event) => {
        const listener = (record: any) => heard.push([event, record.email])
        service().on(event, listener)
        return [event, listener] as const
      })
      try {
        await work()
      } finally {
        for (const [event, listener] of listeners) service().removeListener(event, listener)
      }
      return heard
    }

    describe('service API', () => {
      it('creates a new record and changes the one holding the key: one row per key, events as the rows went', async () => {
        let created: any
        const first = await eventsOf(async () => {
          created = await service().upsert({ email: 'cy@x.org', name: 'Cy', phone: '3', team: 'red' })
        })
        assert.equal(created.email, 'cy@x.org')
        assert.equal(created.score, 7, 'a create takes the default')
        assert.deepEqual(first, [['created', 'cy@x.org']])
        let changed: any
        const second = await eventsOf(async () => {
          changed = await service().upsert({ email: 'cy@x.org', name: 'Cyrus', phone: '3', team: 'red' })
        })
        assert.equal(changed.id, created.id)
        assert.equal(changed.name, 'Cyrus')
        assert.equal(changed.score, 7)
        assert.deepEqual(second, [['patched', 'cy@x.org']])
        // A field the body leaves out keeps its value: the default is a create's only.
        await env.server.db('contacts').where({ email: 'cy@x.org' }).update({ score: 40 })
        const kept = await service().upsert({ email: 'cy@x.org', name: 'Cy', phone: '3', team: 'red' })
        assert.equal(kept.score, 40)
        const many = await eventsOf(() =>
          service().upsert([
            { email: 'cy@x.org', name: 'Cy again', phone: '3', team: 'red' },
            { email: 'dee@x.org', name: 'Dee', phone: '4', team: 'red' }
          ])
        )
        assert.deepEqual(many, [
          ['patched', 'cy@x.org'],
          ['created', 'dee@x.org']
        ])
        assert.equal((await rows().where({ email: 'cy@x.org' })).length, 1)
      })

      it('a versioned record: 1 when created, one more when an upsert changes it; If-Match does not apply', async () => {
        const post = (state: string, headers = {}) =>
          env.server.http('POST', '/devices', { serial: 'D-1', state }, { ...MERGE, ...headers })
        assert.equal((await post('new')).body.version, 1)
        const changed = await post('used')
        assert.equal(changed.status, 200)
        assert.deepEqual([changed.body.state, changed.body.version], ['used', 2])
        assert.equal((await post('old', { 'if-match': '"2"' })).status, 400)
      })

      it('a removed record (soft delete) still holds its key: a 409 saying so, as a create gets', async () => {
        const device = await env.server.http('POST', '/devices', { serial: 'D-9', state: 'new' })
        const removed = await env.server.http('DELETE', `/devices/${device.body.id}`, undefined, {
          'if-match': '"1"'
        })
        assert.equal(removed.status, 200)
        const upserted = await env.server.http('POST', '/devices', { serial: 'D-9', state: 'back' }, MERGE)
        assert.equal(upserted.status, 409)
        assert.match(upserted.body.message, /A removed Device still holds this serial/)
        assert.equal(
          (await env.server.http('POST', '/devices', { serial: 'D-9', state: 'back' })).status,
          409
        )
        assert.equal((await env.server.db('devices').where({ serial: 'D-9' }))[0].state, 'new')
      })

      it('refuses what it cannot do: no key in a record, no key on the resource, a list without multi', async () => {
        await assert.rejects(service().upsert({ name: 'No key', phone: '0', team: 'red' }), {
          name: 'BadRequest',
          errors: [{ field: 'body.email', message: 'is required' }]
        })
        const notes = env.server.app.service('notes') as unknown as { upsert?: unknown }
        await assert.rejects(
          (notes.upsert as (data: unknown) => Promise<unknown>).call(notes, { text: 'x' }),
          { name: 'MethodNotAllowed' }
        )
        await assert.rejects(
          service().upsert([{ email: 'a@x.org', name: 'A', phone: '0', team: 'red' }], {
            adapter: { multi: false }
          }),
          { name: 'MethodNotAllowed' }
        )
        assert.equal((await rows().where({ email: 'a@x.org' })).length, 0)
      })
    })

    describe('REST: POST with Prefer: resolution=merge-duplicates', () => {
      it('201 when every record was created, 200 when one changed, Preference-Applied either way', async () => {
        const body = { email: 'eve@x.org', name: 'Eve', phone: '5', team: 'red' }
        const created = await env.server.http('POST', '/contacts', body, MERGE)
        assert.equal(created.status, 201)
        assert.equal(created.headers.get('preference-applied'), 'resolution=merge-duplicates')
        assert.equal(created.body.name, 'Eve')
        const changed = await env.server.http('POST', '/contacts', { ...body, name: 'Evelyn' }, MERGE)
        assert.equal(changed.status, 200)
        assert.equal(changed.body.id, created.body.id)
        assert.equal(changed.body.name, 'Evelyn')
        const list = await env.server.http(
          'POST',
          '/contacts',
          [
            { ...body, name: 'Eve' },
            { email: 'fay@x.org', name: 'Fay', phone: '6', team: 'red' }
          ],
          { prefer: 'return=representation, resolution="merge-duplicates"' }
        )
        assert.equal(list.status, 200, JSON.stringify(list.body))
        assert.deepEqual(
          list.body.map((record: any) => record.name),
          ['Eve', 'Fay']
        )
        // In Feathers' dialect too: the preference is never ignored.
        const feathersDialect = await env.server.http('POST', '/contacts', body, { ...MERGE, ...FEATHERS })
        assert.equal(feathersDialect.status, 200)
        assert.equal(feathersDialect.body.id, created.body.id)
        // Without the preference a POST is a create, and the key is taken.
        const plain = await env.server.http('POST', '/contacts', body)
        assert.equal(plain.status, 409)
      })

      it('bad input: a missing key, a wrong type, another resolution, a resource without a key: 400s', async () => {
        const missing = await env.server.http(
          'POST',
          '/contacts',
          { name: 'X', phone: '1', team: 'red' },
          MERGE
        )
        assert.equal(missing.status, 400)
        assert.equal(missing.body.name, 'BadRequest')
        assert.match(JSON.stringify(missing.body), /email/)
        const wrongType = await env.server.http(
          'POST',
          '/contacts',
          { email: 'x@x.org', name: 'X', phone: '1', team: 'red', score: 'high' },
          MERGE
        )
        assert.equal(wrongType.status, 400)
        assert.match(JSON.stringify(wrongType.body), /score/)
        const ignore = await env.server.http(
          'POST',
          '/contacts',
          { email: 'x@x.org', name: 'X', phone: '1', team: 'red' },
          { prefer: 'resolution=ignore-duplicates' }
        )
        assert.equal(ignore.status, 400)
        const keyless = await env.server.http('POST', '/notes', { text: 'hi' }, MERGE)
        assert.equal(keyless.status, 400)
        assert.match(keyless.body.message, /no upsert key/)
        assert.equal((await rows().where({ email: 'x@x.org' })).length, 0)
      })

      it('another unique value taken: 409 naming it, and the record holding it unchanged', async () => {
        const taken = await env.server.http(
          'POST',
          '/contacts',
          { email: 'gus@x.org', name: 'Gus', phone: '7', team: 'red', handle: 'bob' },
          MERGE
        )
        assert.equal(taken.status, 409)
        assert.equal(taken.body.name, 'Conflict')
        const [bob] = await rows().where({ handle: 'bob' })
        assert.equal(bob.email, 'bob@x.org')
        assert.equal(bob.name, 'Bob')
        assert.equal((await rows().where({ email: 'gus@x.org' })).length, 0)
      })
    })

    describe('OpenAPI', () => {
      it("documents the POST's Prefer header, its 200 and 409, on resources with a key only", async () => {
        const { body: document } = await env.server.http('GET', '/openapi.json')
        const post = document.paths['/contacts'].post
        assert.equal(post.operationId, 'contacts.createOrUpsert')
        assert.deepEqual(
          post.parameters.map((parameter: any) => [parameter.in, parameter.name]),
          [['header', 'Prefer']]
        )
        assert.match(post.description, /resolution=merge-duplicates/)
        assert.ok(post.responses['200'].headers['Preference-Applied'])
        assert.deepEqual(Object.keys(post.responses).sort(), ['200', '201', '400', '409', '415'])
        assert.equal(document.paths['/notes'].post.operationId, 'notes.createOne')
        assert.equal(document.paths['/notes'].post.parameters, undefined)
      })
    })

    describe('authorization', () => {
      it('a caller may not overwrite a record outside its scope: 409, nothing written, no event', async () => {
        const heard = await eventsOf(async () => {
          const refused = await env.server.http(
            'POST',
            '/contacts',
            { email: 'bob@x.org', name: 'Mallory', phone: '666', team: 'red' },
            { ...MERGE, ...RED }
          )
          assert.equal(refused.status, 409)
          assert.equal(refused.body.name, 'Conflict')
          assert.match(refused.body.message, /may not change/)
          // In a list, one refused record undoes the others.
          const many = await env.server.http(
            'POST',
            '/contacts',
            [
              { email: 'hal@x.org', name: 'Hal', phone: '8', team: 'red' },
              { email: 'bob@x.org', name: 'Mallory', phone: '666', team: 'red' }
            ],
            { ...MERGE, ...RED }
          )
          assert.equal(many.status, 409)
        })
        assert.deepEqual(heard, [])
        const [bob] = await rows().where({ email: 'bob@x.org' })
        assert.equal(bob.name, 'Bob')
        assert.equal(bob.team, 'blue')
        assert.equal((await rows().where({ email: 'hal@x.org' })).length, 0)
        // Its own team's records it may.
        const own = await env.server.http(
          'POST',
          '/contacts',
          { email: 'ann@x.org', name: 'Annie', phone: '1', team: 'red' },
          { ...MERGE, ...RED }
        )
        assert.equal(own.status, 200)
        assert.equal(own.body.name, 'Annie')
      })

      it('neither a create nor a change may leave the caller scope: 403, nothing written', async () => {
        const moved = await env.server.http(
          'POST',
          '/contacts',
          { email: 'ann@x.org', name: 'Ann', phone: '1', team: 'blue' },
          { ...MERGE, ...RED }
        )
        assert.equal(moved.status, 403)
        const outside = await env.server.http(
          'POST',
          '/contacts',
          { email: 'ivy@x.org', name: 'Ivy', phone: '9', team: 'blue' },
          { ...MERGE, ...RED }
        )
        assert.equal(outside.status, 403)
        assert.equal((await rows().where({ email: 'ann@x.org' }))[0].team, 'red')
        assert.equal((await rows().where({ email: 'ivy@x.org' })).length, 0)
      })

      it('field rules: what the caller may not read is absent from the answer', async () => {
        const body = { email: 'jo@x.org', name: 'Jo', phone: '10', team: 'red' }
        const staff = await env.server.http('POST', '/contacts', body, { ...MERGE, 'x-role': 'staff' })
        assert.equal(staff.status, 201)
        assert.equal('phone' in staff.body, false)
        const again = await env.server.http('POST', '/contacts', body, { ...MERGE, 'x-role': 'staff' })
        assert.equal(again.status, 200)
        assert.equal('phone' in again.body, false)
        const gql = await graphql(
          env.server,
          'mutation { upsertOneContact(input: { upsert: { email: "jo@x.org", name: "Jo", phone: "10", team: "red" } }) { id phone } }',
          undefined,
          { 'x-role': 'staff' }
        )
        assert.deepEqual(codes(gql), ['BAD_USER_INPUT'])
      })
    })

    describe('GraphQL: upsertOne and upsertMany', () => {
      it('answer the records as createOne and createMany do; a refusal has its code', async () => {
        const one = await graphql(
          env.server,
          'mutation { upsertOneContact(input: { upsert: { email: "kim@x.org", name: "Kim", phone: "11", team: "red" } }) { id name score } }'
        )
        assert.equal(one.errors, undefined)
        assert.equal(one.data.upsertOneContact.score, 7)
        const many = await graphql(
          env.server,
          `
            mutation {
              upsertManyContacts(
                input: {
                  upserts: [
                    { email: "kim@x.org", name: "Kimberly", phone: "11", team: "red" }
                    { email: "lou@x.org", name: "Lou", phone: "12", team: "red" }
                  ]
                }
              ) {
                id
                name
              }
            }
          `
        )
        assert.equal(many.errors, undefined)
        assert.equal(many.data.upsertManyContacts[0].id, one.data.upsertOneContact.id)
        assert.deepEqual(
          many.data.upsertManyContacts.map((record: any) => record.name),
          ['Kimberly', 'Lou']
        )
        const refused = await graphql(
          env.server,
          'mutation { upsertOneContact(input: { upsert: { email: "bob@x.org", name: "M", phone: "6", team: "red" } }) { id } }',
          undefined,
          RED
        )
        assert.deepEqual(codes(refused), ['CONFLICT'])
        const keyless = await graphql(env.server, '{ __type(name: "Mutation") { fields { name } } }')
        const names = keyless.data.__type.fields.map((field: any) => field.name)
        assert.ok(names.includes('upsertOneContact') && names.includes('upsertManyContacts'))
        assert.ok(!names.some((name: string) => /^upsert.*Note/.test(name)))
      })
    })

    describe('Feathers clients', () => {
      it('the REST client and socket.io call upsert as a custom method; socket.io hears created, then patched', async () => {
        const restConnection = restClient(env.server.baseUrl).fetch(fetch)
        const rest = feathers()
          .configure(restConnection)
          .set('connection', restConnection)
          .configure(resourceClient('contacts'))
        const made = await (rest.service('contacts') as any).upsert({
          email: 'max@x.org',
          name: 'Max',
          phone: '13',
          team: 'red'
        })
        assert.equal(made.name, 'Max')
        const listed = await (rest.service('contacts') as any).upsert([
          { email: 'max@x.org', name: 'Max', phone: '13', team: 'red' },
          { email: 'ola@x.org', name: 'Ola', phone: '15', team: 'red' }
        ])
        assert.deepEqual(
          listed.map((record: any) => record.id === made.id),
          [true, false]
        )
        const socket = io(env.server.baseUrl, {
          transports: ['websocket'],
          extraHeaders: { 'x-role': 'staff' }
        })
        try {
          const socketConnection = socketioClient(socket)
          const client = feathers()
            .configure(socketConnection)
            .set('connection', socketConnection)
            .configure(resourceClient('contacts'))
          const heard: Array<[string, any]> = []
          client.service('contacts').on('created', (record: any) => heard.push(['created', record]))
          client.service('contacts').on('patched', (record: any) => heard.push(['patched', record]))
          const changed = await (client.service('contacts') as any).upsert({
            email: 'max@x.org',
            name: 'Maxine',
            phone: '13',
            team: 'red'
          })
          assert.equal(changed.id, made.id)
          assert.equal('phone' in changed, false)
          const fresh = await (client.service('contacts') as any).upsert([
            { email: 'ned@x.org', name: 'Ned', phone: '14', team: 'red' }
          ])
          assert.equal(fresh[0].name, 'Ned')
          const deadline = Date.now() + 5000
          while (heard.length < 2 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20))
          assert.deepEqual(
            heard.map(([event, record]) => [event, record.email]),
            [
              ['patched', 'max@x.org'],
              ['created', 'ned@x.org']
            ]
          )
          // Events carry what each connection may read.
          assert.ok(heard.every(([, record]) => !('phone' in record)))
        } finally {
          socket.close()
        }
      })
    })

    describe('concurrency', () => {
      it('many concurrent upserts of one key make one record, without an error', async () => {
        // Several rounds, each on a key of its own, so that the statements of a round meet on a fresh key.
        for (let round = 0; round < 6; round++) {
          const email = `race${round}@x.org`
          const answers = await Promise.all(
            Array.from({ length: 12 }, (_, index) =>
              env.server.http(
                'POST',
                '/contacts',
                { email, name: `Racer ${index}`, phone: String(index), team: 'red' },
                MERGE
              )
            )
          )
          assert.deepEqual(
            answers.map((answer) => answer.status).sort(),
            [...Array(11).fill(200), 201],
            JSON.stringify(answers.find((answer) => answer.status >= 300)?.body)
          )
          assert.equal(new Set(answers.map((answer) => answer.body.id)).size, 1)
          assert.equal((await rows().where({ email })).length, 1)
        }
      })
    })
  },
  upsertApp
)

describe('Upsert: the option, checked at start-up', () => {
  const withKey = (upsert: unknown, extra: object = {}) =>
    defineResource({
      ...contacts,
      upsert: upsert as { key: string[] },
      authorize: undefined,
      fieldRules: undefined,
      ...extra
    })
  const register = (resource: ReturnType<typeof withKey>) =>
    koa(feathers()).configure(
      feathersQuery({
        Model: knex({ client: 'better-sqlite3', connection: ':memory:', useNullAsDefault: true }),
        resources: [resource]
      })
    )

  it('a key that is no field, no list, or a field clients do not write: a ConfigurationError naming it', () => {
    for (const [key, message] of [
      [{ key: ['mail'] }, /Contact.upsert.key: "mail" is not a field/],
      [{ key: [] }, /Contact.upsert.key must be a non-empty array/],
      [{ key: 'email' }, /Contact.upsert.key must be a non-empty array/],
      [{ key: ['email', 'email'] }, /names a field twice/],
      [{ key: ['id'] }, /id must be a stored field clients write/]
    ] as const) {
      assert.throws(
        () => register(withKey(key)),
        (error: Error) => error instanceof ConfigurationError && message.test(error.message)
      )
    }
    assert.throws(
      () => register(withKey({ key: ['email'] }, { update: { disabled: true } })),
      /Contact.upsert creates and updates: enable create and update/
    )
  })

  for (const database of databaseNames) {
    it(`a table without a unique index on exactly the key fails setup, naming it [${database}]`, async function () {
      this.timeout(60000)
      const testDatabase = await createTestDatabase(database)
      const db = knex(knexConfig(testDatabase.url))
      try {
        await db.schema.createTable('contacts', (columns) => {
          columns.increments('id')
          for (const name of ['email', 'name', 'phone', 'team']) columns.string(name).notNullable()
          columns.integer('score').notNullable()
          columns.string('handle').nullable()
          // Unique, but over more than the key: no record is found by the key alone.
          columns.unique(['email', 'team'])
        })
        const app = koa(feathers()).configure(
          feathersQuery({ Model: db, resources: [withKey({ key: ['email'] })] })
        )
        await assert.rejects(app.setup(), (error: Error) => {
          assert.ok(error instanceof ConfigurationError)
          assert.match(
            error.message,
            /Contact: table contacts has no unique index on exactly \(email\), which upsert.key needs/
          )
          return true
        })
        await db.schema.alterTable('contacts', (columns) => columns.unique(['email']))
        await koa(feathers())
          .configure(feathersQuery({ Model: db, resources: [withKey({ key: ['email'] })] }))
          .setup()
      } finally {
        await db.destroy()
        await testDatabase.drop()
      }
    })
  }
})

forEachDatabase('Upsert in the example application: tags by name, audit columns by hooks', (env) => {
  it('a created tag gets created and createdBy; an upserted one keeps them and gets updated and updatedBy', async () => {
    const first = await env.server.http(
      'POST',
      '/tags',
      { name: 'upserted' },
      { ...MERGE, 'user-name': 'ann' }
    )
    assert.equal(first.status, 201)
    const [stored] = await env.server.db('tags').where({ name: 'upserted' })
    assert.equal(stored.createdBy, 'ann')
    await new Promise((done) => setTimeout(done, 5))
    const second = await graphql(
      env.server,
      'mutation { upsertOneTag(input: { upsert: { name: "upserted" } }) { id created updated } }',
      undefined,
      { 'user-name': 'bob' }
    )
    assert.equal(second.errors, undefined)
    assert.equal(second.data.upsertOneTag.id, String(first.body.id))
    assert.equal(second.data.upsertOneTag.created, first.body.created)
    assert.ok(second.data.upsertOneTag.updated > first.body.updated)
    const [changed] = await env.server.db('tags').where({ name: 'upserted' })
    assert.deepEqual([changed.createdBy, changed.updatedBy], ['ann', 'bob'])
    assert.equal((await env.server.db('tags').where({ name: 'upserted' })).length, 1)
  })

  it('GraphQL subscriptions hear an upsert as created or updated, as its row went', async () => {
    const client = graphqlWsClient(env.server)
    const heard: string[] = []
    const listen = (query: string, kind: string) =>
      client.subscribe(
        { query },
        {
          next: (result: any) =>
            heard.push(`${kind} ${Object.values(result.data ?? {}).map((tag: any) => tag.name)}`),
          error: () => {},
          complete: () => {}
        }
      )
    const stops = [
      listen('subscription { createdTag { name } }', 'created'),
      listen('subscription { updatedOneTag { name } }', 'updated')
    ]
    const upsert = (name: string) => env.server.http('POST', '/tags', { name }, MERGE)
    const until = async (done: () => boolean, probe?: () => Promise<unknown>) => {
      for (let attempt = 0; attempt < 100 && !done(); attempt++) {
        await probe?.()
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    try {
      // Subscriptions start with the connection: probe until both listen (a probe's second upsert patches).
      let probes = 0
      await until(
        () =>
          heard.some((event) => event.startsWith('created')) &&
          heard.some((event) => event.startsWith('updated')),
        async () => {
          await upsert(`probe ${probes}`)
          await upsert(`probe ${probes++}`)
        }
      )
      heard.length = 0
      await upsert('heard')
      await upsert('heard')
      await until(() => heard.length >= 2)
      assert.deepEqual(heard, ['created heard', 'updated heard'])
    } finally {
      for (const stop of stops) stop()
      await client.dispose()
    }
  })
})
