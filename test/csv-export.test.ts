import assert from 'node:assert/strict'
import http from 'node:http'
import { forEachDatabase } from './support/server'
import { parseCsv } from './support/csv'
import { clearTables, seedTodoItems } from './support/seed'
import { exampleResourcesApp } from './support/example-resources-app'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'

const HEADER = '"id","title","description","completed","created","updated","age","priority","subTasksCount"\n'

/** The CSV with the `age` column (milliseconds since created, so it moves) replaced by a marker. */
function withoutAge(csv: string) {
  return csv.replace(/(Z,)\d+(,[^,\n]*,[^,\n]*\n)/g, '$1AGE$2')
}

forEachDatabase('CSV export: format', (env) => {
  beforeEach(() => clearTables(env.server.db))

  it('writes a header row and nothing else for zero rows, with CSV headers', async () => {
    const response = await env.server.http('GET', '/todo-items/export')
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'text/csv; charset=utf-8')
    assert.equal(response.headers.get('content-disposition'), 'attachment; filename="todo-items.csv"')
    assert.equal(response.text, HEADER)
  })

  it('encodes quotes, commas, newlines, nulls, booleans, numbers, dates and formula cells exactly', async () => {
    await seedTodoItems(env.server.db, [
      {
        title: 'Plain',
        description: null,
        completed: false,
        priority: 0,
        created: '2026-09-20T12:30:00.000Z'
      },
      { title: 'say "hi", ok', description: 'line one\nline two', completed: true, priority: 2.5 },
      { title: '=HYPERLINK("x")', description: '+1', priority: -1 },
      { title: '@sum', description: '-2', priority: 10 },
      { title: '\ttabbed', description: '', priority: 1e21 }
    ])
    const response = await env.server.http('GET', '/todo-items/export')
    const ids = (await env.server.db('todo_items').select('id').orderBy('id')).map((row) => row.id)
    assert.equal(
      withoutAge(response.text),
      HEADER +
        `${ids[0]},"Plain",,false,2026-09-20T12:30:00.000Z,2026-09-20T12:30:00.000Z,AGE,0,0\n` +
        `${ids[1]},"say ""hi"", ok","line one\nline two",true,2026-01-01T00:00:01.000Z,2026-01-01T00:00:01.000Z,AGE,2.5,0\n` +
        `${ids[2]},"'=HYPERLINK(""x"")","'+1",false,2026-01-01T00:00:02.000Z,2026-01-01T00:00:02.000Z,AGE,-1,0\n` +
        `${ids[3]},"'@sum","'-2",false,2026-01-01T00:00:03.000Z,2026-01-01T00:00:03.000Z,AGE,10,0\n` +
        `${ids[4]},"'\ttabbed","",false,2026-01-01T00:00:04.000Z,2026-01-01T00:00:04.000Z,AGE,1e+21,0\n`
    )
  })

  it('applies the filter parameters and the search hook, and refuses bad parameters before streaming', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'Alpha', completed: true },
      { title: 'Beta', completed: false, description: 'alphabet' },
      { title: 'Gamma', completed: true }
    ])
    const done = await env.server.http('GET', '/todo-items/export?completed=true')
    assert.deepEqual(
      parseCsv(done.text).records.map((record) => record.title),
      ['Alpha', 'Gamma']
    )
    const searched = await env.server.http('GET', '/todo-items/export?query=alpha')
    assert.deepEqual(
      parseCsv(searched.text).records.map((record) => record.title),
      ['Alpha', 'Beta']
    )
    for (const query of ['completed=maybe', 'limit=10', 'offset=1', 'nope=1']) {
      const bad = await env.server.http('GET', `/todo-items/export?${query}`)
      assert.equal(bad.status, 400, query)
      assert.equal(bad.body.name, 'BadRequest')
      assert.match(bad.headers.get('content-type') ?? '', /application\/json/)
    }
  })
})

forEachDatabase('CSV export: volume', (env) => {
  const total = 50_000
  before(async function () {
    this.timeout(120000)
    await clearTables(env.server.db)
    await seedTodoItems(
      env.server.db,
      Array.from({ length: total }, (_, index) => ({ title: `Item ${index}`, completed: index % 2 === 0 })),
      2000
    )
  })

  it('exports all 50,000 rows in id order', async function () {
    this.timeout(120000)
    const response = await env.server.http('GET', '/todo-items/export')
    assert.ok(response.text.endsWith('\n'))
    const { records } = parseCsv(response.text)
    assert.equal(records.length, total)
    const ids = records.map((record) => Number(record.id))
    for (let index = 1; index < ids.length; index++)
      assert.ok(ids[index] > ids[index - 1], `row ${index} out of order`)
    assert.equal(records[0].title, 'Item 0')
    assert.equal(records[total - 1].title, `Item ${total - 1}`)
  })
})

/**
 * TodoItem read 100 rows at a time, with a time limit no read can keep: on SQLite, whose reads block the
 * event loop, every batch is half the one before (down to one row); on MariaDB, whose reads do not block,
 * batches keep their size.
 */
const smallBatches = exampleResourcesApp({
  resources: [
    { ...todoItemResource, export: { batchSize: 100, maxBatchMilliseconds: 0.001 } },
    subTaskResource,
    ...tagResources
  ]
})

forEachDatabase(
  'CSV export: batches',
  (env) => {
    const total = 450

    it('reads batchSize rows at a time, fewer where a read blocks for longer than the limit', async () => {
      const items = Array.from({ length: total }, (_, index) => ({ title: `Item ${index}` }))
      await seedTodoItems(env.server.db, items)
      let response: Awaited<ReturnType<typeof env.server.http>> | undefined
      const statements = await env.server.recordStatements(async () => {
        response = await env.server.http('GET', '/todo-items/export')
      })
      const reads = statements.filter((sql) => /^select/i.test(sql)).length
      if (env.server.database === 'sqlite') assert.ok(reads > 100, `${reads} reads`)
      else assert.equal(reads, Math.ceil(total / 100))
      assert.deepEqual(
        parseCsv(response!.text).records.map((record) => record.title),
        Array.from({ length: total }, (_, index) => `Item ${index}`)
      )
    })
  },
  smallBatches
)

forEachDatabase('CSV export: back-pressure and disconnects', (env) => {
  const total = 50_000
  before(async function () {
    this.timeout(120000)
    await clearTables(env.server.db)
    // Rows of ~350 bytes: the whole table (17 MB) is more than loopback socket buffers can hold.
    const description = 'x'.repeat(300)
    await seedTodoItems(
      env.server.db,
      Array.from({ length: total }, (_, index) => ({ title: `Item ${index}`, description }))
    )
  })

  it('stops reading while the client does not read, and for good once it disconnects', async function () {
    this.timeout(60000)
    let reads = 0
    const count = (query: { sql: string }) => {
      if (/^select/i.test(query.sql)) reads++
    }
    env.server.db.on('query', count)
    try {
      /** `reads` once it has not changed for half a second: the export has stopped, whatever the machine's load. */
      const settled = async () => {
        let last = -1
        for (let polls = 0; polls < 100 && reads !== last; polls++) {
          last = reads
          // A quiet window, not a sleep: that no read follows shows only as none coming, nothing to await.
          await new Promise((resolve) => setTimeout(resolve, 500))
        }
        return reads
      }
      const request = http.get(`${env.server.baseUrl}/todo-items/export`)
      request.on('error', () => {})
      const response = await new Promise<http.IncomingMessage>((resolve) => request.on('response', resolve))
      response.pause()
      const stalled = await settled()
      // 50 batches of 1,000 rows make the table; a client that reads nothing must hold the server back.
      assert.ok(stalled >= 1 && stalled < 50, `${stalled} batches read for a client that reads nothing`)
      request.destroy()
      const after = await settled()
      assert.ok(after <= stalled + 1, `${after - stalled} batches read after the client left`)
    } finally {
      env.server.db.removeListener('query', count)
    }
  })

  it('ends a failed export with a truncated transfer, never a complete-looking file', async function () {
    this.timeout(60000)
    const response = await fetch(`${env.server.baseUrl}/todo-items/export`)
    assert.equal(response.status, 200)
    const reader = response.body!.getReader()
    await reader.read()
    // The server is held back by the unread response, so most batches are still to come.
    // The next batch fails: the table is gone.
    await env.server.db.schema.renameTable('todo_items', 'todo_items_away')
    let failed = false
    try {
      for (;;) {
        const { done } = await reader.read()
        if (done) break
      }
    } catch {
      failed = true
    } finally {
      await env.server.db.schema.renameTable('todo_items_away', 'todo_items')
    }
    assert.ok(failed, 'the transfer must fail, not end normally')
  })
})
