import assert from 'node:assert/strict'
import http from 'node:http'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { defineResource, Field, FilterableField, IDField } from '../src'
import { knexConfig } from '../example/database'
import { pluginApp } from './support/plugin-app'
import { forEachDatabase, type TestServer } from './support/server'

/** A caller's tenant is its `x-tenant` header; without one it sees every row. */
const tenantOf = (headers: Record<string, unknown> | undefined) => headers?.['x-tenant'] as string | undefined

const rowFields = {
  id: IDField(Type.Integer({ readOnly: true })),
  label: FilterableField(Type.String(), { nullable: true }),
  score: FilterableField(Type.Number(), { nullable: true }),
  tenant: FilterableField(Type.String()),
  note: Field(Type.String(), { nullable: true })
}

const authorize = (context: { params: { headers?: Record<string, unknown> } }) => {
  const tenant = tenantOf(context.params.headers)
  return tenant ? { tenant: { eq: tenant } } : undefined
}

/** Sorted by a column with ties and nulls, descending, in small batches: a cut lands mid-batch. */
const scored = defineResource({
  name: 'ScoredRow',
  schema: Type.Object(rowFields),
  table: 'scored_rows',
  basePath: 'scored-rows',
  query: { defaultSort: [{ field: 'score', direction: 'DESC' }], enableTotalCount: true },
  export: { batchSize: 7 },
  authorize
})

/** Sorted by a text column with ties, nulls first, ascending; no count. */
const labelled = defineResource({
  name: 'LabelledRow',
  schema: Type.Object(rowFields),
  table: 'labelled_rows',
  basePath: 'labelled-rows',
  query: { defaultSort: [{ field: 'label', direction: 'ASC', nulls: 'NULLS_FIRST' }] },
  export: { batchSize: 5 },
  authorize
})

/** Sorted by a date with ties (to the millisecond) and nulls, descending; created through the service. */
const dated = defineResource({
  name: 'DatedRow',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    at: FilterableField(Type.String({ format: 'date-time' }), { nullable: true }),
    tenant: FilterableField(Type.String())
  }),
  table: 'dated_rows',
  basePath: 'dated-rows',
  multi: true,
  query: { defaultSort: [{ field: 'at', direction: 'DESC' }] },
  export: { batchSize: 6 }
})

/** Sorted by a field no answer carries; `note` withheld from callers whose `x-role` is staff. */
const ranked = defineResource({
  name: 'RankedRow',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    rank: FilterableField(Type.Integer(), { filterOnly: true }),
    note: Field(Type.String(), { nullable: true })
  }),
  table: 'ranked_rows',
  basePath: 'ranked-rows',
  query: { defaultSort: [{ field: 'rank', direction: 'ASC' }] }
})

const ruled = defineResource({
  name: 'RuledRow',
  schema: Type.Object(rowFields),
  table: 'ruled_rows',
  basePath: 'ruled-rows',
  fieldRules: (params) => (params.headers?.['x-role'] === 'staff' ? { note: false } : undefined)
})

const ROWS = 300

function seedRows() {
  return Array.from({ length: ROWS }, (_, index) => ({
    label: index % 9 === 0 ? null : `label ${index % 4}`,
    score: index % 7 === 0 ? null : index % 5,
    tenant: index % 3 === 0 ? 'a' : 'b',
    note: index % 2 ? `say "hi", row ${index}` : null
  }))
}

async function resumeApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  for (const table of ['scored_rows', 'labelled_rows']) {
    await db.schema.createTable(table, (columns) => {
      columns.increments('id')
      columns.string('label').nullable()
      columns.double('score').nullable()
      columns.string('tenant').notNullable()
      columns.string('note').nullable()
    })
    await db(table).insert(seedRows())
  }
  await db.schema.createTable('dated_rows', (columns) => {
    columns.increments('id')
    columns.datetime('at', { precision: 3 }).nullable()
    columns.string('tenant').notNullable()
  })
  await db.schema.createTable('ranked_rows', (columns) => {
    columns.increments('id')
    columns.integer('rank').notNullable()
    columns.string('note').nullable()
  })
  await db('ranked_rows').insert([
    { rank: 2, note: 'second' },
    { rank: 1, note: 'first' }
  ])
  await db.schema.createTable('ruled_rows', (columns) => {
    columns.increments('id')
    columns.string('label').nullable()
    columns.double('score').nullable()
    columns.string('tenant').notNullable()
    columns.string('note').nullable()
  })
  await db('ruled_rows').insert(seedRows().slice(0, 20))
  return pluginApp(db, [scored, labelled, dated, ranked, ruled])
}

const NDJSON = { accept: 'application/x-ndjson' }

/**
 * A download cut off once `bytes` have arrived: the socket is destroyed mid-stream and what the client holds
 * is exactly the first `bytes` (most likely ending inside a row).
 */
function cutDownload(server: TestServer, path: string, headers: Record<string, string>, bytes: number) {
  return new Promise<string>((resolve, reject) => {
    const request = http.get(server.baseUrl + path, { headers }, (response) => {
      assert.equal(response.statusCode, 200)
      const chunks: Buffer[] = []
      let received = 0
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        received += chunk.length
        if (received >= bytes) {
          request.destroy()
          resolve(Buffer.concat(chunks).subarray(0, bytes).toString('utf8'))
        }
      })
      response.on('end', () => reject(new Error(`the export ended before ${bytes} bytes`)))
    })
    request.on('error', (error) => {
      if (!request.destroyed) reject(error)
    })
  })
}

/** What a client keeps of a cut download: its complete lines; and the last one's resume token. */
function completeLines(text: string, ndjson: boolean) {
  const kept = text.slice(0, text.lastIndexOf('\n') + 1)
  const last = kept.slice(0, -1).split('\n').pop() ?? ''
  const token = ndjson ? JSON.parse(last).$after : last.slice(last.lastIndexOf(',') + 1)
  return { kept, token: token as string }
}

/** An export read whole, as text whatever its format. */
async function exportText(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(server.baseUrl + path, { headers })
  const text = await response.text()
  assert.equal(response.status, 200, text)
  return { headers: response.headers, text }
}

forEachDatabase(
  'Export: resumed after a cut',
  (env) => {
    before(async () => {
      const rows = Array.from({ length: 120 }, (_, index) => ({
        at:
          index % 8 === 0
            ? null
            : new Date(Date.UTC(2026, 0, 1 + (index % 5), 12, 0, 0, index % 3)).toISOString(),
        tenant: 'a'
      }))
      for (let at = 0; at < rows.length; at += 60)
        await env.server.app.service('dated-rows').create(rows.slice(at, at + 60))
    })

    for (const resource of ['scored-rows', 'labelled-rows', 'dated-rows']) {
      for (const ndjson of [false, true]) {
        const format = ndjson ? 'NDJSON' : 'CSV'
        const headers = ndjson ? NDJSON : {}
        it(`${resource}, ${format}: the part held and the resumed part are the whole export, at any cut`, async () => {
          const query = 'resumable=true'
          const full = (await exportText(env.server, `/${resource}/export?${query}`, headers)).text
          const rows = resource === 'dated-rows' ? 120 : ROWS
          assert.equal(full.split('\n').length - 1, rows + (ndjson ? 0 : 1))
          for (const fraction of [0.05, 0.3, 0.77, 0.99]) {
            const cut = await cutDownload(
              env.server,
              `/${resource}/export?${query}`,
              headers,
              Math.floor(full.length * fraction)
            )
            const { kept, token } = completeLines(cut, ndjson)
            const rest = await exportText(
              env.server,
              `/${resource}/export?${query}&after=${encodeURIComponent(token)}`,
              headers
            )
            assert.equal(kept + rest.text, full, `cut at ${fraction}`)
          }
        })
      }
    }

    it('with a filter and a search-free request, a token resumes only its own filter', async () => {
      const full = (await exportText(env.server, '/scored-rows/export?tenant=a&resumable=1')).text
      const cut = await cutDownload(
        env.server,
        '/scored-rows/export?tenant=a&resumable=1',
        {},
        full.length / 2
      )
      const { kept, token } = completeLines(cut, false)
      const rest = await exportText(env.server, `/scored-rows/export?tenant=a&after=${token}`)
      assert.equal(kept + rest.text, full)
      for (const other of ['tenant=b&', '', 'label=x&']) {
        const refused = await env.server.http('GET', `/scored-rows/export?${other}after=${token}`)
        assert.equal(refused.status, 400, other)
        assert.equal(refused.body.errors[0].field, 'after')
        assert.match(refused.body.message, /another export/)
      }
      const asNdjson = await env.server.http(
        'GET',
        `/scored-rows/export?tenant=a&after=${token}`,
        undefined,
        NDJSON
      )
      assert.equal(asNdjson.status, 400)
      const otherResource = await env.server.http('GET', `/labelled-rows/export?tenant=a&after=${token}`)
      assert.equal(otherResource.status, 400)
    })

    it('refuses tokens that are no tokens, or changed positions, before anything is sent', async () => {
      const full = (await exportText(env.server, '/scored-rows/export?resumable=true')).text
      const token = full.split('\n')[5].split(',').pop()!
      const [position, scope] = token.split('.')
      const changed = Buffer.from(JSON.stringify({ score: 'high', id: 1 })).toString('base64url')
      const missing = Buffer.from(JSON.stringify({ id: 1 })).toString('base64url')
      for (const bad of [
        'x',
        `${position}.short`,
        `${changed}.${scope}`,
        `${missing}.${scope}`,
        `e30.${scope}`
      ]) {
        const refused = await env.server.http('GET', `/scored-rows/export?after=${encodeURIComponent(bad)}`)
        assert.equal(refused.status, 400, bad)
        assert.match(refused.headers.get('content-type') ?? '', /application\/json/)
        assert.equal(refused.body.errors[0].field.split('.')[0], 'after', JSON.stringify(refused.body))
      }
      const contradicted = await env.server.http('GET', `/scored-rows/export?resumable=false&after=${token}`)
      assert.equal(contradicted.status, 400)
      assert.equal(contradicted.body.errors[0].field, 'resumable')
    })

    it('a token carries no authority: resumed under a narrower scope, only the rows that scope shows', async () => {
      const full = (await exportText(env.server, '/scored-rows/export?resumable=true')).text
      const cut = await cutDownload(env.server, '/scored-rows/export?resumable=true', {}, full.length / 3)
      const { kept, token } = completeLines(cut, false)
      const narrowed = await exportText(env.server, `/scored-rows/export?after=${token}`, { 'x-tenant': 'a' })
      const rest = full.slice(kept.length).split('\n').filter(Boolean)
      const visible = rest.filter((line) => line.split(',')[3] === '"a"')
      assert.ok(visible.length > 0 && visible.length < rest.length)
      assert.equal(narrowed.text, visible.map((line) => line + '\n').join(''))
    })

    it('rows written between the cut and the resumption: those after the position come, those before do not', async () => {
      const full = (await exportText(env.server, '/scored-rows/export?resumable=true', NDJSON)).text
      const cut = await cutDownload(env.server, '/scored-rows/export?resumable=true', NDJSON, full.length / 2)
      const { kept, token } = completeLines(cut, true)
      const last = JSON.parse(kept.trim().split('\n').pop()!)
      assert.ok(last.score !== null && last.score > 0 && last.score < 4, JSON.stringify(last))
      await env.server.db('scored_rows').insert([
        { score: 4.5, tenant: 'a', label: 'before' },
        { score: 0.5, tenant: 'a', label: 'after' }
      ])
      try {
        const rest = await exportText(env.server, `/scored-rows/export?after=${token}`, NDJSON)
        const labels = rest.text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).label)
        assert.ok(labels.includes('after'))
        assert.ok(!labels.includes('before'))
      } finally {
        await env.server.db('scored_rows').whereIn('label', ['before', 'after']).delete()
      }
    })

    it('says how many rows the export has, up front, where the resource counts (also when resumed)', async () => {
      const response = await exportText(env.server, '/scored-rows/export?tenant=a')
      const rows = response.text.split('\n').length - 2
      assert.equal(response.headers.get('x-total-count'), String(rows))
      assert.equal(response.headers.get('x-total-count-is-estimate'), null)
      assert.equal(response.headers.get('content-length'), null)
      const token = (await exportText(env.server, '/scored-rows/export?tenant=a&resumable=1')).text
        .split('\n')[3]
        .split(',')
        .pop()
      const resumed = await exportText(env.server, `/scored-rows/export?tenant=a&after=${token}`)
      assert.equal(resumed.headers.get('x-total-count'), String(rows))
      const uncounted = await exportText(env.server, '/labelled-rows/export')
      assert.equal(uncounted.headers.get('x-total-count'), null)
    })

    it('a token made for other columns (field rules) is a 400; a sort no row carries cannot be resumed', async () => {
      const admin = (await exportText(env.server, '/ruled-rows/export?resumable=true')).text
      const token = admin.split('\n')[3].split(',').pop()!
      const staff = { 'x-role': 'staff' }
      const refused = await env.server.http('GET', `/ruled-rows/export?after=${token}`, undefined, staff)
      assert.equal(refused.status, 400)
      assert.match(refused.body.message, /another export/)
      const own = (await exportText(env.server, '/ruled-rows/export?resumable=true', staff)).text
      assert.equal(own.split('\n')[0], '"id","label","score","tenant","$after"')
      const ownToken = own.split('\n')[3].split(',').pop()!
      const rest = await exportText(env.server, `/ruled-rows/export?after=${ownToken}`, staff)
      assert.equal(own.split('\n').slice(0, 4).join('\n') + '\n' + rest.text, own)

      const plain = await exportText(env.server, '/ranked-rows/export')
      assert.equal(plain.text, '"id","note"\n2,"first"\n1,"second"\n')
      const unresumable = await env.server.http('GET', '/ranked-rows/export?resumable=true')
      assert.equal(unresumable.status, 400)
      assert.equal(unresumable.body.errors[0].field, 'resumable')
      assert.match(unresumable.body.message, /rank/)
    })

    it('a resumable export has the $after column last; without resumable, none', async () => {
      const plain = (await exportText(env.server, '/scored-rows/export')).text
      assert.equal(plain.split('\n')[0], '"id","label","score","tenant","note"')
      const resumable = (await exportText(env.server, '/scored-rows/export?resumable=true')).text
      assert.equal(resumable.split('\n')[0], '"id","label","score","tenant","note","$after"')
      assert.match(resumable.split('\n')[1], /,eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/)
      const first = JSON.parse(
        (await exportText(env.server, '/scored-rows/export?resumable=true', NDJSON)).text.split('\n')[0]
      )
      assert.deepEqual(Object.keys(first), ['id', 'label', 'score', 'tenant', 'note', '$after'])
    })
  },
  resumeApp
)
