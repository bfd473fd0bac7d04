import assert from 'node:assert/strict'
import http from 'node:http'
import { forEachDatabase, type TestServer } from './support/server'
import { parseCsv } from './support/csv'
import { readsSynchronously } from './support/databases'
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

/** The bytes of a response as sent: `Response.text()` would drop a byte order mark. */
async function exportBytes(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(server.baseUrl + path, { headers })
  return { response, bytes: Buffer.from(await response.arrayBuffer()) }
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf])

const NDJSON = { accept: 'application/x-ndjson' }

/** An NDJSON export's status, headers and text (the suite's JSON client would parse it as one JSON text). */
async function ndjsonExport(server: TestServer, path: string) {
  const { response, bytes } = await exportBytes(server, path, NDJSON)
  return { status: response.status, headers: response.headers, text: bytes.toString('utf8') }
}

/** The records of an NDJSON export, checking that every line is one JSON object ended by `\n`. */
function parseNdjson(text: string): Array<Record<string, unknown>> {
  if (text === '') return []
  assert.ok(text.endsWith('\n'), 'the last line ends with \\n too')
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line))
}

forEachDatabase('CSV export: for spreadsheets', (env) => {
  beforeEach(() => clearTables(env.server.db))

  it('starts with a UTF-8 byte order mark with bom=1 or bom=true, and without one by default', async () => {
    await seedTodoItems(env.server.db, [{ title: 'Ümlaut café' }, { title: 'second' }])
    const plain = await exportBytes(env.server, '/todo-items/export')
    assert.ok(!plain.bytes.subarray(0, 3).equals(BOM))
    assert.match(plain.bytes.toString('utf8'), /"Ümlaut café"/)
    for (const query of ['bom=1', 'bom=true']) {
      const marked = await exportBytes(env.server, `/todo-items/export?${query}`)
      assert.equal(marked.response.status, 200, query)
      assert.ok(marked.bytes.subarray(0, 3).equals(BOM), query)
      const rest = marked.bytes.subarray(3).toString('utf8')
      assert.equal(withoutAge(rest), withoutAge(plain.bytes.toString('utf8')), `${query}: the CSV after it`)
    }
    for (const query of ['bom=0', 'bom=false']) {
      const unmarked = (await exportBytes(env.server, `/todo-items/export?${query}`)).bytes
      assert.equal(unmarked[0], '"'.charCodeAt(0), `${query}: the header row first`)
    }
  })

  it('writes date-times as YYYY-MM-DD HH:MM:SS in UTC with dateFormat=spreadsheet, ISO 8601 with iso', async () => {
    await seedTodoItems(env.server.db, [{ title: 'Dated', created: '2026-09-20T12:30:45.678Z' }])
    const spreadsheet = await env.server.http('GET', '/todo-items/export?dateFormat=spreadsheet')
    assert.equal(spreadsheet.status, 200)
    assert.match(spreadsheet.text, /\n\d+,"Dated",,false,2026-09-20 12:30:45,2026-09-20 12:30:45,\d+,0,0\n$/)
    const iso = await env.server.http('GET', '/todo-items/export?dateFormat=iso')
    assert.match(iso.text, /,2026-09-20T12:30:45\.678Z,2026-09-20T12:30:45\.678Z,/)
    assert.equal(withoutAge(iso.text), withoutAge((await env.server.http('GET', '/todo-items/export')).text))
  })

  it('keeps text that reads as a number quoted in CSV and a string in NDJSON', async () => {
    await seedTodoItems(env.server.db, [{ title: '007', description: '0012345' }])
    const csv = await env.server.http('GET', '/todo-items/export')
    assert.match(csv.text, /\n\d+,"007","0012345",false,/)
    const [record] = parseNdjson((await ndjsonExport(env.server, '/todo-items/export')).text)
    assert.equal(record.title, '007')
    assert.equal(record.description, '0012345')
  })

  it('refuses bad values of bom and dateFormat, and either with NDJSON, with a 400 naming them', async () => {
    const cases: Array<[string, Record<string, string>, string[]]> = [
      ['bom=yes', {}, ['bom']],
      ['bom=', {}, ['bom']],
      ['bom=1&bom=0', {}, ['bom']],
      ['dateFormat=excel', {}, ['dateFormat']],
      ['bom=maybe&dateFormat=excel', {}, ['bom', 'dateFormat']],
      ['bom=1', NDJSON, ['bom']],
      ['dateFormat=iso', NDJSON, ['dateFormat']]
    ]
    for (const [query, headers, fields] of cases) {
      const bad = await env.server.http('GET', `/todo-items/export?${query}`, undefined, headers)
      const described = `${query} ${JSON.stringify(headers)}: ${bad.text}`
      assert.equal(bad.status, 400, described)
      assert.equal(bad.body.name, 'BadRequest', described)
      assert.deepEqual(
        bad.body.errors.map((error: { field: string }) => error.field),
        fields,
        described
      )
    }
    const misplaced = await env.server.http('GET', '/todo-items/export?bom=1', undefined, NDJSON)
    assert.match(misplaced.body.errors[0].message, /CSV only/)
  })
})

forEachDatabase('CSV export: NDJSON', (env) => {
  beforeEach(() => clearTables(env.server.db))

  it('answers Accept: application/x-ndjson with one JSON object per line, in the CSV columns', async () => {
    const empty = await ndjsonExport(env.server, '/todo-items/export')
    assert.equal(empty.status, 200)
    assert.equal(empty.headers.get('content-type'), 'application/x-ndjson')
    assert.equal(empty.headers.get('content-disposition'), 'attachment; filename="todo-items.ndjson"')
    assert.match(empty.headers.get('vary') ?? '', /Accept/i)
    assert.equal(empty.text, '', 'no rows, no lines')

    await seedTodoItems(env.server.db, [
      { title: 'say "hi",\nok', description: null, priority: 2.5, created: '2026-09-20T12:30:00.000Z' },
      { title: '=1+1', completed: true, priority: -1 }
    ])
    const records = parseNdjson((await ndjsonExport(env.server, '/todo-items/export')).text)
    const csv = parseCsv((await env.server.http('GET', '/todo-items/export')).text)
    for (const record of records) assert.deepEqual(Object.keys(record), csv.header)
    const { age: _first, ...first } = records[0]
    assert.deepEqual(first, {
      id: Number(csv.records[0].id),
      title: 'say "hi",\nok',
      description: null,
      completed: false,
      created: '2026-09-20T12:30:00.000Z',
      updated: '2026-09-20T12:30:00.000Z',
      priority: 2.5,
      subTasksCount: 0
    })
    assert.equal(typeof records[0].age, 'number')
    // JSON has no formulas: the text stays as it is.
    assert.equal(records[1].title, '=1+1')
    assert.equal(records[1].completed, true)
  })

  it('applies the filter parameters and the search hook as the CSV does', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'Alpha', completed: true },
      { title: 'Beta', completed: false, description: 'alphabet' },
      { title: 'Gamma', completed: true }
    ])
    const titles = async (query: string) =>
      parseNdjson((await ndjsonExport(env.server, `/todo-items/export?${query}`)).text).map(
        (record) => record.title
      )
    assert.deepEqual(await titles('completed=true'), ['Alpha', 'Gamma'])
    assert.deepEqual(await titles('query=alpha'), ['Alpha', 'Beta'])
    const bad = await env.server.http('GET', '/todo-items/export?completed=maybe', undefined, NDJSON)
    assert.equal(bad.status, 400)
  })

  it('chooses the format by Accept, and answers an Accept it cannot give with a 406', async () => {
    await seedTodoItems(env.server.db, [{ title: 'Negotiated' }])
    const typeFor = async (accept: string) => {
      const response = await env.server.http('GET', '/todo-items/export', undefined, { accept })
      return [response.status, response.headers.get('content-type')]
    }
    assert.deepEqual(await typeFor('*/*'), [200, 'text/csv; charset=utf-8'])
    assert.deepEqual(await typeFor('text/*'), [200, 'text/csv; charset=utf-8'])
    assert.deepEqual(await typeFor('text/html,application/xhtml+xml,*/*;q=0.8'), [
      200,
      'text/csv; charset=utf-8'
    ])
    assert.deepEqual(await typeFor('application/x-ndjson;q=0.5, text/csv'), [200, 'text/csv; charset=utf-8'])
    assert.deepEqual(await typeFor('text/csv;q=0.5, application/x-ndjson'), [200, 'application/x-ndjson'])
    for (const accept of ['application/json', 'text/html', 'application/x-ndjson;q=0, text/plain']) {
      const refused = await env.server.http('GET', '/todo-items/export', undefined, { accept })
      assert.equal(refused.status, 406, accept)
      assert.equal(refused.body.name, 'NotAcceptable', accept)
      assert.match(refused.body.message, /text\/csv or application\/x-ndjson/)
    }
  })
})

/** TodoItem with a BOM and spreadsheet dates by default, and at most 3 rows read 2 at a time. */
const spreadsheetExports = exampleResourcesApp({
  resources: [
    { ...todoItemResource, export: { bom: true, dateFormat: 'spreadsheet', maxRows: 3, batchSize: 2 } },
    subTaskResource,
    ...tagResources
  ]
})

forEachDatabase(
  "CSV export: the resource's export options",
  (env) => {
    beforeEach(() => clearTables(env.server.db))

    it('writes the byte order mark and spreadsheet dates by default; the request overrides both', async () => {
      await seedTodoItems(env.server.db, [{ title: 'Dated', created: '2026-09-20T12:30:45.678Z' }])
      const byDefault = await exportBytes(env.server, '/todo-items/export')
      assert.ok(byDefault.bytes.subarray(0, 3).equals(BOM))
      assert.match(byDefault.bytes.toString('utf8'), /,2026-09-20 12:30:45,2026-09-20 12:30:45,/)
      const overridden = await exportBytes(env.server, '/todo-items/export?bom=false&dateFormat=iso')
      assert.ok(!overridden.bytes.subarray(0, 3).equals(BOM))
      assert.match(overridden.bytes.toString('utf8'), /,2026-09-20T12:30:45\.678Z,/)
    })

    it('caps NDJSON at maxRows like the CSV, with no byte order mark and ISO dates', async () => {
      await seedTodoItems(
        env.server.db,
        Array.from({ length: 5 }, (_, index) => ({
          title: `Item ${index}`,
          created: '2026-09-20T12:30:45.678Z'
        }))
      )
      const { response, bytes } = await exportBytes(env.server, '/todo-items/export', NDJSON)
      assert.equal(response.headers.get('x-export-row-limit'), '3')
      assert.equal(bytes[0], '{'.charCodeAt(0), 'JSON text starts with no byte order mark')
      const records = parseNdjson(bytes.toString('utf8'))
      assert.deepEqual(
        records.map((record) => [record.title, record.created]),
        ['Item 0', 'Item 1', 'Item 2'].map((title) => [title, '2026-09-20T12:30:45.678Z'])
      )
    })
  },
  spreadsheetExports
)

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
    before(() =>
      seedTodoItems(
        env.server.db,
        Array.from({ length: total }, (_, index) => ({ title: `Item ${index}` }))
      )
    )

    it('reads batchSize rows at a time, fewer where a read blocks for longer than the limit', async () => {
      let response: Awaited<ReturnType<typeof env.server.http>> | undefined
      const statements = await env.server.recordStatements(async () => {
        response = await env.server.http('GET', '/todo-items/export')
      })
      // The count for X-Total-Count (TodoItem has enableTotalCount), when not kept from before, is no batch.
      const reads = statements.filter((sql) => /^select/i.test(sql) && !/^select count\(/i.test(sql)).length
      if (readsSynchronously(env.server.database)) assert.ok(reads > 100, `${reads} reads`)
      else assert.equal(reads, Math.ceil(total / 100))
      assert.deepEqual(
        parseCsv(response!.text).records.map((record) => record.title),
        Array.from({ length: total }, (_, index) => `Item ${index}`)
      )
    })

    it('reads NDJSON in the same batches', async () => {
      let response: Awaited<ReturnType<typeof ndjsonExport>> | undefined
      const statements = await env.server.recordStatements(async () => {
        response = await ndjsonExport(env.server, '/todo-items/export')
      })
      // The count for X-Total-Count (TodoItem has enableTotalCount), when not kept from before, is no batch.
      const reads = statements.filter((sql) => /^select/i.test(sql) && !/^select count\(/i.test(sql)).length
      if (readsSynchronously(env.server.database)) assert.ok(reads > 100, `${reads} reads`)
      else assert.equal(reads, Math.ceil(total / 100))
      assert.deepEqual(
        parseNdjson(response!.text).map((record) => record.title),
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
