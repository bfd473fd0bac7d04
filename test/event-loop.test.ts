import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { runNode } from './support/node-process'

/**
 * Clients in a process of their own that read `count` exports of `url` as fast as they come: prints
 * `started <n>` at the first bytes and `done <n> <epoch ms> <lines>` at the end of each.
 */
const FAST_EXPORT_READERS = `
  const http = require('node:http')
  const [url, count] = process.argv.slice(1)
  for (let n = 0; n < Number(count); n++) {
    http.get(url, (response) => {
      let lines = 0
      response.once('data', () => console.log('started ' + n))
      response.on('data', (chunk) => { for (const byte of chunk) if (byte === 10) lines++ })
      response.on('end', () => console.log('done ' + n + ' ' + Date.now() + ' ' + lines))
    })
  }
`

const linesStarting = (lines: string[], prefix: string) => lines.filter((line) => line.startsWith(prefix))

/**
 * better-sqlite3 reads synchronously, and a client that reads fast never makes the response wait for the
 * socket: an export that did not give the event loop back between its batches ran to its end in one turn.
 */
forEachDatabase("Event loop: CSV exports to fast clients leave room for other users' requests", (env) => {
  const total = 20_000
  let id: number

  before(async function () {
    this.timeout(60000)
    await clearTables(env.server.db)
    ;[id] = await seedTodoItems(
      env.server.db,
      Array.from({ length: total }, (_, index) => ({ title: `Item ${index}` })),
      2000
    )
  })

  it('answers a simple GET before any of four concurrent exports ends; all complete', async function () {
    this.timeout(60000)
    const readers = runNode(FAST_EXPORT_READERS, [`${env.server.baseUrl}/todo-items/export`, '4'])
    try {
      await readers.waitFor((lines) => linesStarting(lines, 'started').length === 4)
      const sent = Date.now()
      const get = await env.server.http('GET', `/todo-items/${id}`)
      const answered = Date.now()
      assert.equal(get.status, 200)

      await readers.waitFor((lines) => linesStarting(lines, 'done').length === 4)
      const exports = linesStarting(readers.lines, 'done').map((line) => line.split(' ').map(Number))
      const firstEnd = Math.min(...exports.map(([, , at]) => at))
      assert.ok(
        answered < firstEnd,
        `the GET took ${answered - sent} ms and was answered ${answered - firstEnd} ms after an export ended`
      )
      for (const [, , , lines] of exports) assert.equal(lines, total + 1, 'every export is complete')
    } finally {
      await readers.stop()
    }
  })
})
