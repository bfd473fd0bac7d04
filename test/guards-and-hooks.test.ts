import assert from 'node:assert/strict'
import type { Knex } from 'knex'
import { forEachDatabase, type TestServer } from './support/server'
import { parseCsv } from './support/csv'
import { tableRows } from './support/tables'
import { codes, graphql } from './support/graphql'
import { accessToken, bearer, createAuthApp } from './support/auth-app'
import { advanceIdSequences } from './support/seed'

type Headers = Record<string, string>

async function seed(db: Knex) {
  await db('sub_tasks').delete()
  await db('todo_items').delete()
  await db('announcements').delete()
  await db('notes').delete()
  const created = new Date('2026-03-01T00:00:00.000Z')
  const audit = (owner: string) => ({ created, updated: created, createdBy: owner, updatedBy: owner })
  await db('todo_items').insert([
    { id: 1, title: 'ann open', completed: false, ...audit('ann') },
    { id: 2, title: 'ann done', completed: true, ...audit('ann') },
    { id: 3, title: 'bob open', completed: false, ...audit('bob') }
  ])
  await db('sub_tasks').insert([{ id: 1, title: 'task', todoItemId: 1, ...audit('ann') }])
  await db('announcements').insert([{ id: 1, text: 'hello' }])
  await db('notes').insert([
    { id: 1, owner: 'ann', text: 'ann’s note' },
    { id: 2, owner: 'bob', text: 'bob’s note' }
  ])
  await advanceIdSequences(db, ['todo_items', 'sub_tasks', 'announcements', 'notes'])
}

/** Every row of the tables the tests write to, to show that a refused request changed nothing. */
function everything(db: Knex) {
  return tableRows(db, ['todo_items', 'sub_tasks', 'announcements', 'notes'])
}

/** Every REST endpoint of TodoItem, whose resource-level guard is `authenticate('jwt')`. */
const TODO_ENDPOINTS: Array<[method: string, path: string, body: unknown, status: number]> = [
  ['GET', '/todo-items', undefined, 200],
  ['GET', '/todo-items/1', undefined, 200],
  ['GET', '/todo-items/export', undefined, 200],
  ['POST', '/todo-items', { title: 'new' }, 201],
  ['PUT', '/todo-items/1', { title: 'put' }, 200],
  ['PATCH', '/todo-items/1', { title: 'patched' }, 200],
  ['DELETE', '/todo-items/1', undefined, 200],
  ['GET', '/sub-tasks/export', undefined, 200]
]

/** One request each: graphql-js reports only the first of several failing non-null root fields. */
const GRAPHQL_TODO_QUERIES = [
  '{ todoItems { edges { node { id } } } }',
  '{ todoItem(id: "1") { id } }',
  '{ todoItemAggregate { count { id } } }',
  '{ subTasks { edges { node { id } } } }'
]

async function graphqlCodes(server: TestServer, headers: Headers) {
  const responses = await Promise.all(
    GRAPHQL_TODO_QUERIES.map((source) => graphql(server, source, undefined, headers))
  )
  return responses.map(codes)
}

forEachDatabase(
  'Guards, authorize denials and application hooks (real JWT authentication)',
  (env) => {
    const tokens = {} as Record<'ann' | 'bob' | 'eve', Headers>
    /** Credentials that must not pass `authenticate('jwt')`. */
    let invalid: Array<[string, Headers]>

    before(async () => {
      for (const user of ['ann', 'bob', 'eve'] as const)
        tokens[user] = bearer(await accessToken(env.server, user))
      const service = env.server.app.service('authentication') as any
      invalid = [
        ['no token', {}],
        ['a malformed token', bearer('not-a-jwt')],
        [
          'a token signed with another secret',
          bearer(await service.createAccessToken({ sub: 'ann' }, {}, 'x'.repeat(40)))
        ],
        ['an expired token', bearer(await service.createAccessToken({ sub: 'ann' }, { expiresIn: -60 }))],
        ['another authorization scheme', { authorization: 'Basic YW5uOnNlY3JldA==' }]
      ]
    })
    beforeEach(() => seed(env.server.db))

    const http = (method: string, path: string, body: unknown, headers: Headers) =>
      env.server.http(method, path, body, headers)

    describe('authenticate("jwt") as the resource guard', () => {
      it('refuses every REST endpoint with 401 without a valid token, and changes nothing', async () => {
        const before = await everything(env.server.db)
        for (const [credential, headers] of invalid) {
          for (const [method, path, body] of TODO_ENDPOINTS) {
            const response = await http(method, path, body, headers)
            assert.equal(response.status, 401, `${method} ${path} with ${credential}: ${response.text}`)
            assert.equal(response.body.name, 'NotAuthenticated')
          }
        }
        assert.deepEqual(await everything(env.server.db), before)
      })

      it('lets a valid token through every REST endpoint', async () => {
        for (const [method, path, body, status] of TODO_ENDPOINTS) {
          const response = await http(method, path, body, tokens.ann)
          assert.equal(response.status, status, `${method} ${path}: ${response.text}`)
        }
      })

      it('answers UNAUTHENTICATED on GraphQL without a valid token, and data with one', async () => {
        for (const [credential, headers] of invalid) {
          const unauthenticated = GRAPHQL_TODO_QUERIES.map(() => ['UNAUTHENTICATED'])
          assert.deepEqual(await graphqlCodes(env.server, headers), unauthenticated, credential)
        }
        assert.deepEqual(
          await graphqlCodes(env.server, tokens.ann),
          GRAPHQL_TODO_QUERIES.map(() => [])
        )
        const source =
          '{ todoItems { edges { node { id } } } todoItem(id: "1") { id } todoItemAggregate { count { id } } }'
        const response = await graphql(env.server, source, undefined, tokens.ann)
        assert.deepEqual(response.data, {
          todoItems: { edges: [{ node: { id: '1' } }, { node: { id: '2' } }] },
          todoItem: { id: '1' },
          todoItemAggregate: [{ count: { id: 2 } }]
        })
      })
    })

    describe('guards on create, update.one and delete.one only (Announcement)', () => {
      const READS: Array<[string, string]> = [
        ['GET', '/announcements'],
        ['GET', '/announcements/1'],
        ['GET', '/announcements/export']
      ]
      const WRITES: Array<[string, string, unknown, number]> = [
        ['POST', '/announcements', { text: 'new' }, 201],
        ['PUT', '/announcements/1', { text: 'put' }, 200],
        ['PATCH', '/announcements/1', { text: 'patched' }, 200],
        ['DELETE', '/announcements/1', undefined, 200]
      ]

      it('reads without a token, on REST and GraphQL', async () => {
        for (const [method, path] of READS)
          assert.equal((await http(method, path, undefined, {})).status, 200, path)
        const response = await graphql(env.server, '{ announcements { edges { node { text } } } }')
        assert.deepEqual(response.data.announcements.edges, [{ node: { text: 'hello' } }])
      })

      it('refuses writes without a valid token with 401 and changes nothing; a valid token writes', async () => {
        const before = await everything(env.server.db)
        for (const [credential, headers] of invalid) {
          for (const [method, path, body] of WRITES) {
            const response = await http(method, path, body, headers)
            assert.equal(response.status, 401, `${method} ${path} with ${credential}`)
          }
        }
        assert.deepEqual(await everything(env.server.db), before)
        for (const [method, path, body, status] of WRITES) {
          assert.equal((await http(method, path, body, tokens.bob)).status, status, `${method} ${path}`)
        }
      })
    })

    describe('authorize denying: Forbidden → 403 / FORBIDDEN, NotAuthenticated → 401 / UNAUTHENTICATED', () => {
      const NOTE_ENDPOINTS: Array<[string, string, unknown]> = [
        ['GET', '/notes', undefined],
        ['GET', '/notes/1', undefined],
        ['GET', '/notes/export', undefined],
        ['POST', '/notes', { owner: 'ann', text: 'x' }],
        ['PATCH', '/notes/1', { text: 'x' }],
        ['DELETE', '/notes/1', undefined]
      ]
      const cases: Array<[who: string, headers: () => Headers, status: number, code: string]> = [
        ['an anonymous caller (the guard lets it pass)', () => ({}), 401, 'UNAUTHENTICATED'],
        ['a suspended user', () => tokens.eve, 403, 'FORBIDDEN']
      ]
      for (const [who, headers, status, code] of cases) {
        it(`refuses ${who} on every REST endpoint and GraphQL query, changing nothing`, async () => {
          const before = await everything(env.server.db)
          for (const [method, path, body] of NOTE_ENDPOINTS) {
            const response = await http(method, path, body, headers())
            assert.equal(response.status, status, `${method} ${path}: ${response.text}`)
          }
          assert.deepEqual(await everything(env.server.db), before)
          const response = await graphql(
            env.server,
            '{ notes { edges { cursor } } note(id: "1") { id } }',
            {},
            headers()
          )
          assert.deepEqual(codes(response), [code, code])
        })
      }

      it('refuses a suspended user on TodoItem (behind the JWT guard) too', async () => {
        assert.equal((await http('GET', '/todo-items', undefined, tokens.eve)).status, 403)
        const forbidden = GRAPHQL_TODO_QUERIES.map(() => ['FORBIDDEN'])
        assert.deepEqual(await graphqlCodes(env.server, tokens.eve), forbidden)
      })
    })

    describe('create and update against the authorization filter', () => {
      const noteRows = () => env.server.db('notes').select('id', 'owner', 'text').orderBy('id')

      it('refuses to create a record outside the filter (403, nothing written), creates one inside', async () => {
        const before = await noteRows()
        const outside = await http('POST', '/notes', { owner: 'bob', text: 'planted' }, tokens.ann)
        assert.equal(outside.status, 403, outside.text)
        assert.deepEqual(await noteRows(), before)
        const inside = await http('POST', '/notes', { owner: 'ann', text: 'mine' }, tokens.ann)
        assert.equal(inside.status, 201, inside.text)
        assert.deepEqual(inside.body, { id: inside.body.id, owner: 'ann', text: 'mine' })
        assert.equal((await noteRows()).length, before.length + 1)
      })

      it('refuses to move a record out of the filter (403), and treats another’s record as missing (404)', async () => {
        const before = await noteRows()
        const moved = await http('PATCH', '/notes/1', { owner: 'bob' }, tokens.ann)
        assert.equal(moved.status, 403, moved.text)
        const foreign = await http('PUT', '/notes/2', { owner: 'ann' }, tokens.ann)
        assert.equal(foreign.status, 404, foreign.text)
        assert.deepEqual(await noteRows(), before)
      })

      it('sets the owner in the application’s create hook: the creator sees the record, the other user does not', async () => {
        const created = await http('POST', '/todo-items', { title: 'from ann' }, tokens.ann)
        assert.equal(created.status, 201, created.text)
        const row = await env.server.db('todo_items').where('id', created.body.id).first()
        assert.equal(row.createdBy, 'ann')
        assert.equal((await http('GET', `/todo-items/${created.body.id}`, undefined, tokens.ann)).status, 200)
        assert.equal((await http('GET', `/todo-items/${created.body.id}`, undefined, tokens.bob)).status, 404)
      })
    })

    describe('the application’s own hooks run on every surface', () => {
      it('applies a before-find and before-aggregate hook to REST, CSV export and GraphQL alike', async () => {
        const headers = { ...tokens.ann, 'x-hide-completed': 'yes' }
        const list = await http('GET', '/todo-items', undefined, headers)
        assert.deepEqual(
          list.body.nodes.map((node: any) => node.title),
          ['ann open']
        )
        const csv = await http('GET', '/todo-items/export', undefined, headers)
        assert.deepEqual(
          parseCsv(csv.text).records.map((record) => record.title),
          ['ann open']
        )
        const response = await graphql(
          env.server,
          '{ todoItems { edges { node { title } } } todoItemAggregate { count { id } } }',
          undefined,
          headers
        )
        assert.deepEqual(response.data, {
          todoItems: { edges: [{ node: { title: 'ann open' } }] },
          todoItemAggregate: [{ count: { id: 1 } }]
        })
        // Without the header the hook stays out of the way: the hook, not something else, did the narrowing.
        const all = await http('GET', '/todo-items', undefined, tokens.ann)
        assert.equal(all.body.nodes.length, 2)
      })
    })
  },
  createAuthApp
)
