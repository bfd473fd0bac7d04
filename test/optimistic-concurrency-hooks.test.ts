import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import { graphql, codes } from './support/graphql'
import { forEachDatabase } from './support/server'
import { versionedApp } from './support/versioned-app'

const ANN = { 'x-owner': 'ann' }

/**
 * An application hook that names the version itself, as `$ifMatch` in the query (from its own header,
 * `x-version`), or drops the client's `$ifMatch` (`x-drop`): what it writes is what the write checks, on
 * every transport, whether the call's query is Feathers' syntax or the plugin's query model.
 */
function versionHook(context: HookContext) {
  const version = context.params.headers?.['x-version']
  if (version) context.params.query = { ...context.params.query, $ifMatch: Number(version) }
  if (context.params.headers?.['x-drop']) {
    const { $ifMatch: _dropped, ...query } = context.params.query ?? {}
    context.params.query = query
  }
}

forEachDatabase(
  'Optimistic concurrency: a before hook rewriting $ifMatch',
  (env) => {
    before(() => {
      env.server.app.service('cards').hooks({ before: { patch: [versionHook], remove: [versionHook] } })
    })
    const create = async () =>
      (await env.server.app.service('cards').create({ title: 'c', owner: 'ann' })) as { id: number }

    it('a hook adding $ifMatch to a REST call checks it: 412 when stale, nothing written', async () => {
      const { id } = await create()
      const stale = await env.server.http(
        'PATCH',
        `/cards/${id}`,
        { title: 'lost' },
        { ...ANN, 'x-version': '7' }
      )
      assert.equal(stale.status, 412)
      assert.equal(
        (await env.server.http('DELETE', `/cards/${id}`, undefined, { ...ANN, 'x-version': '7' })).status,
        412
      )
      const stored = await env.server.app.service('cards').get(id)
      assert.deepEqual([stored.title, stored.version], ['c', 1])
      const current = await env.server.http(
        'PATCH',
        `/cards/${id}`,
        { title: 'kept' },
        { ...ANN, 'x-version': '1' }
      )
      assert.deepEqual([current.status, current.body.version], [200, 2])
    })

    it('a hook adding $ifMatch to a GraphQL mutation checks it too', async () => {
      const { id } = await create()
      const stale = await graphql(
        env.server,
        `mutation { updateOneCard(input: { id: ${id}, update: { title: "lost" } }) { version } }`,
        undefined,
        { ...ANN, 'x-version': '7' }
      )
      assert.deepEqual(codes(stale), ['PRECONDITION_FAILED'])
    })

    it("a hook dropping $ifMatch drops the check; the REST client's If-Match header stays the client's", async () => {
      const { id } = await create()
      const service = env.server.app.service('cards') as any
      const dropped = await service.patch(
        id,
        { title: 'b' },
        { headers: { 'x-drop': '1' }, query: { $ifMatch: 7 } }
      )
      assert.equal(dropped.version, 2)
      const header = await env.server.http(
        'PATCH',
        `/cards/${id}`,
        { title: 'c' },
        { ...ANN, 'x-drop': '1', 'if-match': '"1"' }
      )
      assert.equal(header.status, 412)
    })
  },
  versionedApp
)
