import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { forEachDatabase, startServer, type TestServer } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { runNode } from './support/node-process'
import { exampleResourcesApp } from './support/example-resources-app'
import { stampCreation } from '../example/hooks/audit'
import { pollUntil } from './support/eventually'
import { readsSynchronously } from './support/databases'

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

/**
 * Another process writing to the same SQLite file: it holds the write lock (`BEGIN IMMEDIATE`) from the start
 * and commits after `argv[2]` ms, or when it is stopped.
 */
const LOCK_HOLDER = `
  const Database = require('better-sqlite3')
  const db = new Database(process.argv[1])
  db.exec('BEGIN IMMEDIATE')
  console.log('locked')
  const commit = () => { db.exec('COMMIT'); console.log('released') }
  if (process.argv[2]) setTimeout(commit, Number(process.argv[2]))
  else setInterval(() => {}, 60000)
`

/**
 * better-sqlite3's busy timeout sleeps on the event loop: a write waiting for another process's lock froze
 * the whole server for the 5 s it waited.
 */
// The plugin's own wait for the lock (`sqlite.busyTimeout`) is better-sqlite3's: node-sqlite3 waits off the event loop.
const onBetterSqlite = readsSynchronously('sqlite') ? describe : describe.skip

onBetterSqlite("Event loop: a SQLite write waiting for another process's lock [sqlite]", function () {
  const busyTimeout = 2000
  let directory: string
  let file: string
  let server: TestServer
  let id: number

  before(async function () {
    directory = mkdtempSync(join(tmpdir(), 'fq-lock-'))
    file = join(directory, 'app.sqlite')
    const factory = exampleResourcesApp({ quietErrors: true, plugin: { sqlite: { busyTimeout } } })
    server = await startServer('sqlite', async () => {
      const started = await factory(`sqlite:${file}`)
      started.app.service('todo-items').hooks({ before: { create: [stampCreation] } })
      return started
    })
    ;[id] = await seedTodoItems(server.db, [{ title: 'existing' }])
  })

  after(async () => {
    await server?.close()
    rmSync(directory, { recursive: true, force: true })
  })

  const rows = async () => Number((await server.db('todo_items').count({ n: '*' }))[0].n)

  it('serves reads and /openapi.json while a write waits, a 503 after busyTimeout', async function () {
    this.timeout(30000)
    const before = await rows()
    const holder = runNode(LOCK_HOLDER, [file])
    try {
      await holder.waitFor((lines) => lines.includes('locked'))
      // The write waits for the lock once a BEGIN of its found the database locked (SQLITE_BUSY).
      let busy = false
      const onError = (error: { code?: string }) => (busy ||= /^SQLITE_BUSY/.test(error.code ?? ''))
      server.db.on('query-error', onError)
      const sent = Date.now()
      const write = server.http('POST', '/todo-items', { title: 'waits for the lock' }).then((response) => ({
        response,
        at: Date.now()
      }))
      try {
        await pollUntil(() => busy, 'the write to meet the lock')
      } finally {
        server.db.removeListener('query-error', onError)
      }
      const answered: Array<[string, number]> = []
      for (const path of ['/openapi.json', `/todo-items/${id}`]) {
        const response = await server.http('GET', path)
        assert.equal(response.status, 200, path)
        answered.push([path, Date.now()])
      }
      const { response, at } = await write
      assert.equal(response.status, 503, response.text)
      assert.equal(response.body.name, 'Unavailable')
      // Generous: these take milliseconds; the driver's own wait held them until the write gave up.
      for (const [path, time] of answered) {
        assert.ok(time < at - 1000, `${path} was answered ${at - time} ms before the waiting write`)
      }
      const waited = at - sent
      assert.ok(waited >= busyTimeout - 100 && waited < busyTimeout + 3000, `answered after ${waited} ms`)
    } finally {
      await holder.stop()
    }
    assert.equal(await rows(), before, 'nothing written')
  })

  it('lets a waiting write through once the other process commits', async function () {
    this.timeout(30000)
    const holder = runNode(LOCK_HOLDER, [file, '500'])
    try {
      await holder.waitFor((lines) => lines.includes('locked'))
      const sent = Date.now()
      const response = await server.http('POST', '/todo-items', { title: 'written after the wait' })
      assert.equal(response.status, 201, response.text)
      assert.ok(Date.now() - sent >= 300, 'the write waited for the other process to commit')
      const written = await server.http('GET', `/todo-items/${response.body.id}`)
      assert.equal(written.body.title, 'written after the wait')
    } finally {
      await holder.stop()
    }
  })
})
