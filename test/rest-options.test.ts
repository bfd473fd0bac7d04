import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { createFixtureApp, seedWidgets } from './support/fixture-app'

const names = (body: Array<{ name: string }>) => body.map((record) => record.name)

forEachDatabase(
  'REST options: Widget (filterRequired, filterOnly, defaultSort, page sizes, paths, guards, soft delete)',
  (env) => {
    beforeEach(async () => {
      await seedWidgets(env.server.db)
    })

    it('requires the filterRequired parameter on list and export', async () => {
      for (const path of ['/widgets', '/widgets/export']) {
        const response = await env.server.http('GET', path)
        assert.equal(response.status, 400, path)
        assert.deepEqual(response.body.errors, [{ field: 'tenant', message: 'is required' }])
      }
    })

    it('filters on filterOnly fields but never serializes them', async () => {
      const list = await env.server.http('GET', '/widgets?tenant=a&secret=s1')
      assert.equal(list.status, 200)
      assert.deepEqual(names(list.body.nodes), ['w3', 'w1'])
      assert.ok(list.body.nodes.every((node: object) => !('secret' in node)))
      assert.ok(!('totalCount' in list.body), 'totalCount only with enableTotalCount')
      const one = await env.server.http('GET', '/widgets/1')
      assert.deepEqual(Object.keys(one.body), ['id', 'tenant', 'name', 'rank', 'weight', 'released'])
      assert.equal(one.body.released, '2026-03-01T10:00:00.000Z')
      const csv = await env.server.http('GET', '/widgets/export?tenant=b')
      assert.equal(csv.text, '"id","tenant","name","rank","weight","released"\n4,"b","w4",2,1,\n')
    })

    it('orders by defaultSort (DESC puts nulls last) with the id as tie-breaker', async () => {
      const page = await env.server.http('GET', '/widgets?tenant=a&limit=3')
      assert.deepEqual(names(page.body.nodes), ['w3', 'w1', 'w5'])
      const next = await env.server.http('GET', '/widgets?tenant=a&limit=3&offset=3')
      assert.deepEqual(names(next.body.nodes), ['w2'])
      assert.deepEqual(next.body.pageInfo, { hasNextPage: false, hasPreviousPage: true })
    })

    it('uses defaultResultSize and enforces maxResultsSize', async () => {
      const page = await env.server.http('GET', '/widgets?tenant=a')
      assert.equal(page.body.nodes.length, 2)
      assert.equal(page.body.pageInfo.hasNextPage, true)
      const tooMany = await env.server.http('GET', '/widgets?tenant=a&limit=4')
      assert.equal(tooMany.status, 400)
      assert.deepEqual(tooMany.body.errors, [{ field: 'limit', message: 'must be <= 3' }])
    })

    it('runs a single statement for a page without totalCount', async () => {
      const count = await env.server.countStatements(() => env.server.http('GET', '/widgets?tenant=a'))
      assert.equal(count, 1)
    })

    it('answers 405 for the disabled create endpoint and writes nothing', async () => {
      const response = await env.server.http('POST', '/widgets', {
        tenant: 'a',
        secret: 'x',
        name: 'n',
        weight: 1
      })
      assert.equal(response.status, 405)
      assert.equal(response.body.name, 'MethodNotAllowed')
      assert.equal(Number((await env.server.db('widgets').count({ n: '*' }))[0].n), 5)
    })

    it('names the option behind a refusal: a search without enableSearch, a disabled endpoint', async () => {
      for (const path of ['/widgets?tenant=a&query=lamp', '/widgets/export?tenant=a&query=lamp']) {
        const search = await env.server.http('GET', path)
        assert.equal(search.status, 400, path)
        assert.equal(search.body.errors.length, 1, search.text)
        assert.equal(search.body.errors[0].field, 'query')
        assert.match(search.body.errors[0].message, /query: \{ enableSearch: true \}.*searchFields/)
      }
      const create = await env.server.http('POST', '/widgets', { tenant: 'a', name: 'n' })
      assert.equal(create.status, 405)
      assert.match(create.body.message, /create: \{ disabled: true \} in its resource definition/)
    })

    it('updates on the custom path behind its guard', async () => {
      assert.equal((await env.server.http('PUT', '/widgets/1', { name: 'x' })).status, 405)
      const refused = await env.server.http('PUT', '/widgets/1/rename', { name: 'x' })
      assert.equal(refused.status, 403)
      assert.equal(refused.body.name, 'Forbidden')
      const allowed = await env.server.http(
        'PUT',
        '/widgets/1/rename',
        { name: 'renamed' },
        { 'x-allow': 'yes' }
      )
      assert.equal(allowed.status, 200)
      assert.equal(allowed.body.name, 'renamed')
      const patched = await env.server.http(
        'PATCH',
        '/widgets/1/rename',
        { rank: null },
        { 'x-allow': 'yes' }
      )
      assert.equal(patched.body.rank, null)
    })

    it('soft-deletes on the custom path: the record disappears from every read but stays in the table', async () => {
      assert.equal((await env.server.http('DELETE', '/widgets/3')).status, 405)
      const removed = await env.server.http('DELETE', '/widgets/3/archive')
      assert.equal(removed.status, 200)
      assert.equal(removed.body.id, 3)
      assert.equal((await env.server.http('GET', '/widgets/3')).status, 404)
      assert.equal((await env.server.http('DELETE', '/widgets/3/archive')).status, 404)
      assert.equal(
        (await env.server.http('PUT', '/widgets/3/rename', { name: 'x' }, { 'x-allow': 'yes' })).status,
        404
      )
      const list = await env.server.http('GET', '/widgets?tenant=a&limit=3')
      assert.deepEqual(names(list.body.nodes), ['w1', 'w5', 'w2'])
      const csv = await env.server.http('GET', '/widgets/export?tenant=a')
      assert.ok(!csv.text.includes('"w3"'))
      const row = await env.server.db('widgets').where('id', 3).first()
      assert.ok(row.deletedAt !== null)
    })
  },
  createFixtureApp
)

forEachDatabase(
  'REST options: Gadget (paging NONE, defaultFilter, disableFilter, search, custom bodies, string ids)',
  (env) => {
    beforeEach(async () => {
      const { db } = env.server
      await db('gadgets').delete()
      await db('gadgets').insert([
        { id: 'g-1', name: 'Lamp', active: true, note: null },
        { id: 'g-2', name: 'Desk lamp', active: false, note: 'old' },
        { id: 'g-3', name: 'Chair', active: true, note: null }
      ])
    })

    it('returns a bare array of every record matching defaultFilter', async () => {
      const response = await env.server.http('GET', '/gadgets')
      assert.equal(response.status, 200)
      assert.deepEqual(response.body, [
        { id: 'g-1', name: 'Lamp', active: true, note: null },
        { id: 'g-3', name: 'Chair', active: true, note: null }
      ])
    })

    it('has no paging or filter parameters, but the search parameter ANDed with defaultFilter', async () => {
      for (const query of ['limit=1', 'offset=1', 'name=Lamp', 'active=false']) {
        const response = await env.server.http('GET', `/gadgets?${query}`)
        assert.equal(response.status, 400, query)
      }
      const found = await env.server.http('GET', '/gadgets?query=lamp')
      assert.deepEqual(names(found.body), ['Lamp'])
    })

    it("applies the search hook's configured caps (2 words, 12 characters)", async () => {
      assert.deepEqual(names((await env.server.http('GET', '/gadgets?query=la%20mp')).body), ['Lamp'])
      for (const [query, message] of [
        ['a%20b%20c', 'must have at most 2 words'],
        ['lamp-lamp-lam', 'must have at most 12 characters']
      ]) {
        const response = await env.server.http('GET', `/gadgets?query=${query}`)
        assert.deepEqual(response.body.errors, [{ field: 'query', message }], query)
      }
    })

    it('keeps the filter parameters and defaultFilter on export, and caps the rows', async () => {
      const all = await env.server.http('GET', '/gadgets/export')
      assert.equal(all.status, 200)
      assert.equal(all.headers.get('x-export-row-limit'), '2')
      assert.equal(all.text, '"id","name","active","note"\n"g-1","Lamp",true,\n"g-3","Chair",true,\n')
      const filtered = await env.server.http('GET', '/gadgets/export?name=Chair')
      assert.equal(filtered.text, '"id","name","active","note"\n"g-3","Chair",true,\n')
      const inactive = await env.server.http('GET', '/gadgets/export?active=false')
      assert.equal(inactive.text, '"id","name","active","note"\n')
    })

    it('validates bodies against the custom create and update schemas', async () => {
      const created = await env.server.http('POST', '/gadgets', { id: 'g-9', name: 'Shelf', active: true })
      assert.equal(created.status, 201)
      assert.deepEqual(created.body, { id: 'g-9', name: 'Shelf', active: true, note: null })
      const extra = await env.server.http('POST', '/gadgets', {
        id: 'g-8',
        name: 'x',
        active: true,
        note: 'n'
      })
      assert.equal(extra.status, 400)
      assert.deepEqual(extra.body.errors, [{ field: 'body.note', message: 'is not allowed' }])
      const duplicate = await env.server.http('POST', '/gadgets', { id: 'g-9', name: 'Again', active: true })
      assert.equal(duplicate.status, 409)
      const rename = await env.server.http('PUT', '/gadgets/g-1', { name: 'x' })
      assert.equal(rename.status, 400)
      const deactivate = await env.server.http('PUT', '/gadgets/g-1', { active: false })
      assert.equal(deactivate.status, 200)
      assert.equal(deactivate.body.active, false)
    })

    it('finds, updates and deletes by string id, defaultFilter not applying to single records', async () => {
      const inactive = await env.server.http('GET', '/gadgets/g-2')
      assert.equal(inactive.status, 200)
      assert.equal(inactive.body.name, 'Desk lamp')
      assert.equal((await env.server.http('GET', '/gadgets/nope')).status, 404)
      const removed = await env.server.http('DELETE', '/gadgets/g-2')
      assert.equal(removed.body.id, 'g-2')
      assert.equal(await env.server.db('gadgets').where('id', 'g-2').first(), undefined)
    })
  },
  createFixtureApp
)
