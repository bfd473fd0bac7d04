import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import { forEachDatabase } from './support/server'
import { versionedApp } from './support/versioned-app'

/** An application hook that shows less of a record to a request with `x-brief`. */
function briefOnRequest(context: HookContext) {
  if (context.params.headers?.['x-brief']) delete context.result.title
}

const varied = (response: Response) =>
  (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase())

/**
 * A versioned record's tag is its version, the same whoever reads it and whatever headers they send, unlike
 * the other reads' tags, which hash the headers. So its `Vary` must name every header the answer may depend
 * on: a cache that keeps one copy for all would revalidate a fuller copy, with a 304, for a caller shown less.
 */
forEachDatabase(
  'Conditional reads: Vary of a versioned record',
  (env) => {
    before(() => env.server.app.service('cards').hooks({ after: { get: [briefOnRequest] } }))

    it('names the headers hooks read (the scope, x-brief), as the tags of other reads do', async () => {
      const card = (await env.server.app.service('cards').create({ title: 'c', owner: 'ann' })) as {
        id: number
      }
      const url = `${env.server.baseUrl}/cards/${card.id}`
      const full = await fetch(url, { headers: { 'x-owner': 'ann' } })
      assert.deepEqual(await full.json(), { id: card.id, title: 'c', owner: 'ann', version: 1 })
      assert.equal(full.headers.get('etag'), '"1"')
      assert.ok(varied(full).includes('x-owner'), full.headers.get('vary') ?? '')
      const brief = await fetch(url, { headers: { 'x-owner': 'ann', 'x-brief': '1' } })
      assert.equal(((await brief.json()) as { title: unknown }).title, null)
      assert.ok(varied(brief).includes('x-brief'), brief.headers.get('vary') ?? '')
      const list = await fetch(`${env.server.baseUrl}/cards`, {
        headers: { 'x-owner': 'ann', 'x-brief': '1' }
      })
      assert.ok(varied(list).includes('x-brief'))
    })
  },
  versionedApp
)
