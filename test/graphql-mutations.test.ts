import assert from 'node:assert/strict'
import { accessToken, bearer } from './support/auth-app'
import { codes, graphql } from './support/graphql'
import { MUTATION_MAX_MULTI, mutationAppFactory } from './support/mutation-app'
import { forEachDatabase, type TestServer } from './support/server'

/** Every row of the fixture's tables, to show that a refused mutation wrote nothing. */
async function snapshot(server: TestServer) {
  const [folders, notes, labels] = await Promise.all(
    ['folders', 'notes', 'labels'].map((table) => server.db(table).select('*').orderBy('id'))
  )
  return JSON.stringify({ folders, notes, labels })
}

forEachDatabase(
  'GraphQL mutations through the resource services',
  (env) => {
    let ann: Record<string, string>
    let bob: Record<string, string>
    const as = (
      user: Record<string, string>,
      query: string,
      variables?: Record<string, unknown>,
      extra = {}
    ) => graphql(env.server, query, variables, { ...user, ...extra })

    before(async () => {
      ann = bearer(await accessToken(env.server, 'ann'))
      bob = bearer(await accessToken(env.server, 'bob'))
    })

    async function createFolder(user: Record<string, string>, name: string, rank = 0) {
      const response = await as(
        user,
        'mutation($f: CreateFolder!) { createOneFolder(input: { folder: $f }) { id } }',
        {
          f: { name, rank }
        }
      )
      assert.deepEqual(response.errors, undefined)
      return response.data.createOneFolder.id as string
    }

    it('createOne writes through the service (hooks, authorize) and reads back over REST and GraphQL', async () => {
      const response = await as(
        ann,
        'mutation { createOneFolder(input: { folder: { name: "Inbox", rank: 2 } }) { id name rank } }'
      )
      assert.deepEqual(response.errors, undefined)
      const { id, ...fields } = response.data.createOneFolder
      assert.deepEqual(fields, { name: 'Inbox', rank: 2 })
      const rest = await env.server.http('GET', `/folders/${id}`, undefined, ann)
      assert.equal(rest.status, 200)
      assert.deepEqual(rest.body, { id: Number(id), name: 'Inbox', rank: 2 })
      const read = await as(ann, `{ folder(id: ${id}) { name rank } }`)
      assert.deepEqual(read.data.folder, { name: 'Inbox', rank: 2 })
      // The before-create hook set the hidden owner from the JWT's user.
      assert.equal((await env.server.db('folders').where({ id }).first()).owner, 'ann')
      // Bob cannot see it.
      assert.deepEqual(codes(await as(bob, `{ folder(id: ${id}) { name } }`)), ['NOT_FOUND'])
    })

    it('needs the guard: without a token a mutation is UNAUTHENTICATED and writes nothing', async () => {
      const before = await snapshot(env.server)
      const response = await graphql(
        env.server,
        'mutation { createOneFolder(input: { folder: { name: "x" } }) { id } }'
      )
      assert.deepEqual(codes(response), ['UNAUTHENTICATED'])
      assert.equal(await snapshot(env.server), before)
    })

    it('bad input is BAD_USER_INPUT naming the input field, and writes nothing', async () => {
      const before = await snapshot(env.server)
      const one = await as(
        ann,
        'mutation { createOneFolder(input: { folder: { name: "x", rank: -1 } }) { id } }'
      )
      assert.deepEqual(codes(one), ['BAD_USER_INPUT'])
      assert.deepEqual(
        one.errors![0].extensions.errors!.map((e) => e.field),
        ['input.folder.rank']
      )
      const many = await as(
        ann,
        'mutation { createManyFolders(input: { folders: [{ name: "ok" }, { name: "" }] }) { id } }'
      )
      assert.deepEqual(codes(many), ['BAD_USER_INPUT'])
      assert.deepEqual(
        many.errors![0].extensions.errors!.map((e) => e.field),
        ['input.folders.1.name']
      )
      const update = await as(
        ann,
        'mutation { updateOneFolder(input: { id: 1, update: { rank: -5 } }) { id } }'
      )
      assert.deepEqual(codes(update), ['BAD_USER_INPUT'])
      assert.deepEqual(
        update.errors![0].extensions.errors!.map((e) => e.field),
        ['input.update.rank']
      )
      // Read-only and hidden fields are not in the input types at all.
      const owner = await as(
        ann,
        'mutation { createOneFolder(input: { folder: { name: "x", owner: "bob" } }) { id } }'
      )
      assert.deepEqual(codes(owner), ['GRAPHQL_VALIDATION_FAILED'])
      assert.equal(await snapshot(env.server), before)
    })

    it('createMany creates every record in one call, at most maxMulti', async () => {
      const response = await as(
        ann,
        'mutation { createManyFolders(input: { folders: [{ name: "m1" }, { name: "m2", rank: 1 }] }) { id name rank } }'
      )
      assert.deepEqual(response.errors, undefined)
      assert.deepEqual(
        response.data.createManyFolders.map((f: { name: string }) => f.name),
        ['m1', 'm2']
      )
      const rest = await env.server.http('GET', '/folders?name=m2', undefined, ann)
      assert.equal(rest.body.nodes.length, 1)

      const before = await snapshot(env.server)
      const folders = Array.from(
        { length: MUTATION_MAX_MULTI + 1 },
        (_, index) => `{ name: "too many ${index}" }`
      )
      const tooMany = await as(
        ann,
        `mutation { createManyFolders(input: { folders: [${folders.join(', ')}] }) { id } }`
      )
      assert.deepEqual(codes(tooMany), ['BAD_USER_INPUT'])
      assert.equal(await snapshot(env.server), before)
    })

    it('updateOne changes the record; a record outside authorize is NOT_FOUND and unchanged', async () => {
      const id = await createFolder(ann, 'to rename')
      const response = await as(
        ann,
        `mutation { updateOneFolder(input: { id: ${id}, update: { name: "renamed" } }) { id name } }`
      )
      assert.deepEqual(response.data.updateOneFolder, { id, name: 'renamed' })
      assert.equal((await env.server.http('GET', `/folders/${id}`, undefined, ann)).body.name, 'renamed')
      const before = await snapshot(env.server)
      const hidden = await as(
        bob,
        `mutation { updateOneFolder(input: { id: ${id}, update: { name: "bob's" } }) { id } }`
      )
      assert.deepEqual(codes(hidden), ['NOT_FOUND'])
      assert.equal(await snapshot(env.server), before)
    })

    it('updateMany counts and changes only the records authorize admits', async () => {
      await createFolder(ann, 'batch-a', 7)
      await createFolder(ann, 'batch-b', 7)
      const bobs = await createFolder(bob, 'batch-c', 7)
      const response = await as(
        ann,
        'mutation { updateManyFolders(input: { filter: { rank: { eq: 7 } }, update: { rank: 8 } }) { updatedCount } }'
      )
      assert.deepEqual(response.data.updateManyFolders, { updatedCount: 2 })
      const read = await as(ann, '{ folders(filter: { rank: { eq: 8 } }) { edges { node { name } } } }')
      assert.deepEqual(read.data.folders.edges.map((e: { node: { name: string } }) => e.node.name).sort(), [
        'batch-a',
        'batch-b'
      ])
      assert.equal((await env.server.http('GET', `/folders/${bobs}`, undefined, bob)).body.rank, 7)
    })

    it('updateMany and deleteMany refuse a missing or empty filter and change nothing', async () => {
      const before = await snapshot(env.server)
      for (const filter of ['{}', '{ name: {} }', '{ and: [] }', '{ or: [{ rank: {} }] }']) {
        const update = await as(
          ann,
          `mutation { updateManyFolders(input: { filter: ${filter}, update: { rank: 3 } }) { updatedCount } }`
        )
        assert.deepEqual(codes(update), ['BAD_USER_INPUT'], filter)
        assert.deepEqual(
          update.errors![0].extensions.errors!.map((e) => e.field),
          ['input.filter']
        )
        const remove = await as(
          ann,
          `mutation { deleteManyFolders(input: { filter: ${filter} }) { deletedCount } }`
        )
        assert.deepEqual(codes(remove), ['BAD_USER_INPUT'], filter)
      }
      const missing = await as(ann, 'mutation { deleteManyFolders(input: {}) { deletedCount } }')
      assert.deepEqual(codes(missing), ['GRAPHQL_VALIDATION_FAILED'])
      assert.equal(await snapshot(env.server), before)
    })

    it('deleteOne answers the deleted record without its id; a hidden one is NOT_FOUND', async () => {
      const id = await createFolder(ann, 'to delete', 4)
      const hidden = await as(bob, `mutation { deleteOneFolder(input: { id: ${id} }) { id } }`)
      assert.deepEqual(codes(hidden), ['NOT_FOUND'])
      const response = await as(ann, `mutation { deleteOneFolder(input: { id: ${id} }) { id name rank } }`)
      assert.deepEqual(response.data.deleteOneFolder, { id: null, name: 'to delete', rank: 4 })
      assert.equal((await env.server.http('GET', `/folders/${id}`, undefined, ann)).status, 404)
    })

    it('deleteMany removes only what authorize admits and counts it', async () => {
      await createFolder(ann, 'gone-1')
      await createFolder(ann, 'gone-2')
      await createFolder(bob, 'gone-3')
      const response = await as(
        ann,
        'mutation { deleteManyFolders(input: { filter: { name: { like: "gone-%" } } }) { deletedCount } }'
      )
      assert.deepEqual(response.data.deleteManyFolders, { deletedCount: 2 })
      const bobs = await as(
        bob,
        '{ folders(filter: { name: { like: "gone-%" } }) { edges { node { name } } } }'
      )
      assert.deepEqual(bobs.data.folders.edges, [{ node: { name: 'gone-3' } }])
    })

    it('a many-mutation is all or nothing: a hook failing after the write undoes every record', async () => {
      await createFolder(ann, 'keep-1', 9)
      await createFolder(ann, 'keep-2', 9)
      const before = await snapshot(env.server)
      const fail = { 'x-fail-after': 'yes' }
      const mutations = [
        'mutation { createManyFolders(input: { folders: [{ name: "n1" }, { name: "n2" }] }) { id } }',
        'mutation { updateManyFolders(input: { filter: { rank: { eq: 9 } }, update: { name: "changed" } }) { updatedCount } }',
        'mutation { deleteManyFolders(input: { filter: { rank: { eq: 9 } } }) { deletedCount } }',
        'mutation { deleteOneFolder(input: { id: 1 }) { name } }'
      ]
      for (const mutation of mutations) {
        const response = await as(ann, mutation, undefined, fail)
        assert.deepEqual(codes(response), ['BAD_USER_INPUT'], mutation)
        assert.equal(await snapshot(env.server), before, mutation)
      }
    })

    it('more records than maxMulti in updateMany or deleteMany is refused before anything changes', async () => {
      for (let index = 0; index <= MUTATION_MAX_MULTI; index++) await createFolder(ann, `bulk-${index}`, 11)
      const before = await snapshot(env.server)
      const update = await as(
        ann,
        'mutation { updateManyFolders(input: { filter: { rank: { eq: 11 } }, update: { rank: 12 } }) { updatedCount } }'
      )
      assert.deepEqual(codes(update), ['BAD_USER_INPUT'])
      const remove = await as(
        ann,
        'mutation { deleteManyFolders(input: { filter: { rank: { eq: 11 } } }) { deletedCount } }'
      )
      assert.deepEqual(codes(remove), ['BAD_USER_INPUT'])
      assert.equal(await snapshot(env.server), before)
    })

    it('mutations are refused over GET, and the operation limits apply to them', async () => {
      const get = await env.server.http(
        'GET',
        `/graphql?query=${encodeURIComponent('mutation { deleteOneFolder(input: { id: 1 }) { name } }')}`,
        undefined,
        ann
      )
      assert.ok(get.status >= 400 && get.status < 500, String(get.status))
      const before = await snapshot(env.server)
      const aliases = Array.from(
        { length: 60 },
        (_, index) => `m${index}: createOneFolder(input: { folder: { name: "a" } }) { id }`
      )
      const tooMany = await as(ann, `mutation { ${aliases.join(' ')} }`)
      assert.deepEqual(codes(tooMany), ['QUERY_TOO_COMPLEX'])
      assert.equal(await snapshot(env.server), before)
    })

    it('honours endpoint options: no create mutations when create is disabled, the custom update body, soft delete, delete guards', async () => {
      const schema = await as(
        ann,
        '{ __schema { mutationType { fields { name } } } __type(name: "UpdateLabel") { inputFields { name } } }'
      )
      const names = schema.data.__schema.mutationType.fields.map((field: { name: string }) => field.name)
      assert.ok(!names.includes('createOneLabel') && !names.includes('createManyLabels'))
      assert.ok(!names.includes('updateManyLabels') && !names.includes('deleteManyLabels'), 'no multi')
      assert.ok(names.includes('updateOneLabel') && names.includes('deleteOneLabel'))
      assert.deepEqual(
        schema.data.__type.inputFields.map((field: { name: string }) => field.name),
        ['color']
      )
      await env.server.db('labels').insert({ name: 'urgent', color: 'red' })
      // Read back, as PostgreSQL's insert answers no id without `returning`.
      const labelId = Number((await env.server.db('labels').where({ name: 'urgent' }).first('id')).id)
      const guarded = await as(ann, `mutation { deleteOneLabel(input: { id: ${labelId} }) { name } }`)
      assert.deepEqual(codes(guarded), ['BAD_USER_INPUT'])
      const removed = await as(
        ann,
        `mutation { deleteOneLabel(input: { id: ${labelId} }) { name color } }`,
        undefined,
        { 'x-may-delete': 'yes' }
      )
      assert.deepEqual(removed.data.deleteOneLabel, { name: 'urgent', color: 'red' })
      const row = await env.server.db('labels').where({ id: labelId }).first()
      assert.ok(row.deletedAt, 'soft deleted: the row stays with its deletion time')
      assert.equal((await env.server.http('GET', `/labels/${labelId}`)).status, 404)
    })
  },
  mutationAppFactory()
)
