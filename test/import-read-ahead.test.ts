import assert from 'node:assert/strict'
import http from 'node:http'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { forEachDatabase, type AppFactory, type TestServer } from './support/server'
import { clearTables } from './support/seed'
import { exampleResourcesApp } from './support/example-resources-app'
import { exampleResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'
import { HEADER, upload } from './support/import-uploads'
import type { ImportOptions } from '../src'
import { stampCreation } from '../example/hooks/audit'

/**
 * Node cuts a request whose body has not all arrived within `server.requestTimeout` (here 1 s, checked every
 * 100 ms). These imports write 400 lines a second, so 1,200 lines take 3 s to write: the upload is read ahead
 * into a temporary file and arrives whole in time, unless `readAheadBytes` holds it back.
 */
const serverTimeouts = { requestTimeout: 1000, headersTimeout: 1000, connectionsCheckingInterval: 100 }
const LINES = 1200
const csvHeaders = { 'content-type': 'text/csv' }

/** 1,200 lines of 800 bytes: far more than an import holds in memory while it writes a batch of 50. */
function paddedChunks() {
  const chunks = [HEADER]
  const description = 'd'.repeat(770)
  for (let from = 0; from < LINES; from += 100) {
    let text = ''
    for (let index = from; index < from + 100; index++) text += `"Item ${index}","${description}",false,1\n`
    chunks.push(text)
  }
  return chunks
}

/** The example's todo items writing 400 imported lines a second, stamped as the example's hook does. */
const importingApp =
  (options: ImportOptions): AppFactory =>
  async (url) => {
    const made = await exampleResourcesApp({
      resources: exampleResources.map((resource) =>
        resource === todoItemResource
          ? { ...todoItemResource, import: { batchSize: 50, maxRowsPerSecond: 400, ...options } }
          : resource
      )
    })(url)
    made.app.service('todo-items').hooks({ before: { create: [stampCreation] } })
    return made
  }

/** The read-ahead files in the temporary folder. */
const readAheadFiles = () => readdirSync(tmpdir()).filter((name) => name.startsWith('feathers-query-import-'))

async function rowCount(server: TestServer) {
  const [row] = await server.db('todo_items').count({ count: '*' })
  return Number(Object.values(row)[0])
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

forEachDatabase(
  'Import: the upload read ahead of the writes',
  (env) => {
    beforeEach(() => clearTables(env.server.db))

    it('takes an import that writes for longer than requestTimeout whole, and removes its file', async () => {
      const before = readAheadFiles()
      const started = performance.now()
      const response = await env.server.http(
        'POST',
        '/todo-items/import',
        paddedChunks().join(''),
        csvHeaders
      )
      assert.equal(response.status, 200, response.text)
      assert.equal(response.body.imported, LINES, response.text.slice(0, 600))
      assert.ok(performance.now() - started > 2500, 'the writes outlast the request timeout')
      assert.equal(await rowCount(env.server), LINES)
      assert.deepEqual(readAheadFiles(), before)
    })

    it('closes the read-ahead of an import refused before it read its body', async function () {
      if (process.platform !== 'linux') this.skip()
      const openFiles = () => readdirSync('/proc/self/fd').length
      const before = openFiles()
      for (let attempt = 0; attempt < 5; attempt++) {
        const refused = await env.server.http(
          'POST',
          '/todo-items/import?dryRun=true',
          paddedChunks().join(''),
          {
            ...csvHeaders,
            'idempotency-key': 'dry'
          }
        )
        assert.equal(refused.status, 400, refused.text)
      }
      await sleep(200)
      assert.ok(openFiles() <= before + 1, `${openFiles() - before} more files open`)
    })

    it('stops the import of a client that left: what committed stays, nothing more is written', async () => {
      const before = readAheadFiles()
      const request = http.request(env.server.baseUrl + '/todo-items/import', {
        method: 'POST',
        headers: csvHeaders
      })
      request.on('error', () => {})
      request.end(paddedChunks().join(''))
      while ((await rowCount(env.server)) === 0) await sleep(20)
      request.destroy()
      await sleep(300)
      const left = await rowCount(env.server)
      await sleep(1000)
      assert.equal(await rowCount(env.server), left, 'no batch after the client left')
      assert.ok(left < LINES / 2, `${left} rows`)
      assert.deepEqual(readAheadFiles(), before)
    })
  },
  importingApp({}),
  serverTimeouts
)

for (const readAheadBytes of [16384, 0]) {
  forEachDatabase(
    `Import: readAheadBytes ${readAheadBytes}`,
    (env) => {
      beforeEach(() => clearTables(env.server.db))

      it('leaves an upload held back by the writes to requestTimeout; the same key resumes it', async () => {
        const chunks = paddedChunks()
        const headers = { ...csvHeaders, 'idempotency-key': `read-ahead-${readAheadBytes}` }
        const cut = await upload(env.server, '/todo-items/import', chunks, headers).catch(() => ({
          status: 0
        }))
        // Node answers 408 and closes; a client still sending may see the connection reset first.
        assert.ok([408, 0].includes(cut.status), `answered ${cut.status}`)
        await sleep(300)
        const committed = await rowCount(env.server)
        assert.ok(committed > 0 && committed < LINES, `${committed} rows`)
        // Each request with the key goes on after the lines committed before it, until one arrives whole.
        let resumed = { status: 408, text: '' }
        for (let tries = 0; resumed.status !== 200 && tries < 6; tries++) {
          resumed = await upload(env.server, '/todo-items/import', chunks, headers).catch(() => ({
            status: 0,
            text: ''
          }))
        }
        assert.equal(resumed.status, 200, resumed.text)
        const titles = await env.server.db('todo_items').pluck('title')
        assert.equal(titles.length, LINES)
        assert.equal(new Set(titles).size, LINES)
      })
    },
    importingApp({ readAheadBytes }),
    serverTimeouts
  )
}
