import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import type { HookContext } from '@feathersjs/feathers'
import { feathers } from '@feathersjs/feathers'
import { Forbidden } from '@feathersjs/errors'
import restClient from '@feathersjs/rest-client'
import socketioClient from '@feathersjs/socketio-client'
import { io } from 'socket.io-client'
import { forEachDatabase, type AppFactory, type TestServer } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { exampleResourcesApp } from './support/example-resources-app'
import { exampleResources } from '../example/resources'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { resourceClient, type ResourceClientService } from '../src/client'
import { stampCreation } from '../example/hooks/audit'
import { HEADER, numberedCsv, upload } from './support/import-uploads'

/** The todo items' titles, descriptions, completion and priorities, by title: what an import writes. */
async function stored(server: TestServer) {
  const rows = await server.db('todo_items').select('title', 'description', 'completed', 'priority')
  return rows
    .map((row) => ({ ...row, completed: !!row.completed, priority: Number(row.priority) }))
    .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0))
}

/** The events of a text/event-stream body. */
function serverSentEvents(text: string) {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)![1]
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1])
      return { event, data }
    })
}

const csvHeaders = { 'content-type': 'text/csv' }

forEachDatabase('Import: CSV and NDJSON through POST /{basePath}/import', (env) => {
  beforeEach(() => clearTables(env.server.db))

  it('upserts by the resource key with onConflict=upsert: a file sent again changes its records, never doubles them', async () => {
    const names = async () =>
      (await env.server.db('tags').select('name').orderBy('name')).map((row: { name: string }) => row.name)
    const first = await env.server.http(
      'POST',
      '/tags/import?onConflict=upsert',
      'name\nalpha\nbeta\n',
      csvHeaders
    )
    assert.equal(first.status, 200, first.text)
    assert.deepEqual([first.body.imported, first.body.failed], [2, 0])
    const again = await env.server.http(
      'POST',
      '/tags/import?onConflict=upsert',
      'name\nalpha\nbeta\ngamma\n',
      csvHeaders
    )
    assert.equal(again.status, 200, again.text)
    assert.deepEqual([again.body.imported, again.body.failed], [3, 0])
    assert.deepEqual(await names(), ['alpha', 'beta', 'gamma'])
    // Without it, a name already taken is that line's error; the others go in.
    const plain = await env.server.http('POST', '/tags/import', 'name\nalpha\ndelta\n', csvHeaders)
    assert.equal(plain.status, 200, plain.text)
    assert.deepEqual([plain.body.imported, plain.body.failed], [1, 1])
    assert.equal(plain.body.errors[0].line, 2)
    assert.deepEqual(await names(), ['alpha', 'beta', 'delta', 'gamma'])
  })

  it('imports what the export wrote: export, empty the table, import, the same records', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'Plain', description: null, completed: false, priority: 0 },
      { title: 'say "hi", ok', description: 'line one\nline two', completed: true, priority: 2.5 },
      { title: '=HYPERLINK("x")', description: '+1', priority: -1 },
      { title: '@sum', description: '-2', priority: 10 },
      { title: '\ttabbed', description: '', priority: 1e21 },
      { title: "'quoted", description: 'Ümlaut café 😀', priority: 0.1 }
    ])
    const before = await stored(env.server)
    for (const [accept, type] of [
      ['text/csv', 'text/csv'],
      ['application/x-ndjson', 'application/x-ndjson']
    ]) {
      for (const query of type === 'text/csv' ? ['', '?bom=1&dateFormat=spreadsheet'] : ['']) {
        const exported = await (
          await fetch(`${env.server.baseUrl}/todo-items/export${query}`, { headers: { accept } })
        ).text()
        await clearTables(env.server.db)
        const imported = await env.server.http('POST', '/todo-items/import', exported, {
          'content-type': type
        })
        assert.equal(imported.status, 200, imported.text)
        assert.deepEqual(imported.body.errors, [])
        assert.equal(imported.body.imported, 6)
        assert.deepEqual(imported.body.ignoredColumns, ['id', 'created', 'updated', 'age', 'subTasksCount'])
        assert.deepEqual(await stored(env.server), before, `${type}${query}`)
      }
    }
  })

  it('reports each failed line with its number and field, and imports the others', async () => {
    const body =
      HEADER +
      '"Good one",,false,1\n' +
      '"Bad priority",,false,high\n' +
      ',,false,2\n' +
      '"Too many cells",,false,3,4\n' +
      '"Multi\nline",,true,5\n' +
      '"Bad boolean",,maybe,6\n' +
      '"Good two","x",true,7\n'
    const response = await env.server.http('POST', '/todo-items/import', body, csvHeaders)
    assert.equal(response.status, 200, response.text)
    const { lines, imported, failed, skipped, dryRun, errors } = response.body
    assert.deepEqual(
      { lines, imported, failed, skipped, dryRun },
      {
        lines: 7,
        imported: 3,
        failed: 4,
        skipped: 0,
        dryRun: false
      }
    )
    assert.deepEqual(errors, [
      { line: 3, field: 'priority', message: 'must be a number' },
      { line: 4, field: 'title', message: 'is required' },
      { line: 5, field: 'line', message: 'has 5 cells, the header 4' },
      { line: 8, field: 'completed', message: 'must be a boolean' }
    ])
    assert.deepEqual(
      (await stored(env.server)).map((row) => row.title),
      ['Good one', 'Good two', 'Multi\nline']
    )
  })

  it('answers the report as CSV for Accept: text/csv, the counts in headers', async () => {
    const body = HEADER + '"A",,false,1\n"B",,false,x\n'
    const response = await env.server.http('POST', '/todo-items/import', body, {
      ...csvHeaders,
      accept: 'text/csv'
    })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('import-imported'), '1')
    assert.equal(response.headers.get('import-failed'), '1')
    assert.equal(response.text, '"line","field","message"\n3,"priority","must be a number"\n')
  })

  it('writes nothing on a dry run, with the same report', async () => {
    const body = HEADER + numberedCsv(5) + '"Bad",,false,x\n'
    const response = await env.server.http('POST', '/todo-items/import?dryRun=true', body, csvHeaders)
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.imported, 5)
    assert.equal(response.body.failed, 1)
    assert.equal(response.body.dryRun, true)
    assert.equal((await stored(env.server)).length, 0)
  })

  it('refuses other media types, unknown columns, a dry run with a key, unknown parameters', async () => {
    const json = await env.server.http('POST', '/todo-items/import', [{ title: 'x' }])
    assert.equal(json.status, 415)
    assert.match(json.body.message, /text\/csv or application\/x-ndjson/)
    const unknown = await env.server.http(
      'POST',
      '/todo-items/import',
      'title,colour\n"a","red"\n',
      csvHeaders
    )
    assert.equal(unknown.status, 400)
    assert.match(unknown.body.message, /Line 1 .*"colour"/)
    const dryKey = await env.server.http('POST', '/todo-items/import?dryRun=true', HEADER, {
      ...csvHeaders,
      'idempotency-key': 'k-dry'
    })
    assert.equal(dryKey.status, 400)
    const parameter = await env.server.http('POST', '/todo-items/import?limit=3', HEADER, csvHeaders)
    assert.equal(parameter.status, 400)
    assert.deepEqual(parameter.body.errors, [{ field: 'query.limit', message: 'is not allowed' }])
    const unclosed = await env.server.http('POST', '/todo-items/import', HEADER + '"A,,false,1\n', csvHeaders)
    assert.equal(unclosed.status, 400)
    assert.match(unclosed.body.message, /not CSV/)
    assert.equal((await stored(env.server)).length, 0)
  })

  it('imports NDJSON, and a gzip-compressed body', async () => {
    const ndjson = '{"title":"N1","completed":true,"priority":1}\n\n{"title":"N2"}\n[1]\n'
    const response = await env.server.http('POST', '/todo-items/import', ndjson, {
      'content-type': 'application/x-ndjson'
    })
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.imported, 2)
    assert.deepEqual(response.body.errors, [{ line: 4, field: 'line', message: 'must be a JSON object' }])
    const gzipped = await fetch(env.server.baseUrl + '/todo-items/import', {
      method: 'POST',
      headers: { 'content-type': 'text/csv', 'content-encoding': 'gzip' },
      body: gzipSync(HEADER + numberedCsv(3))
    })
    assert.equal(gzipped.status, 200)
    assert.equal(((await gzipped.json()) as { imported: number }).imported, 3)
    assert.equal((await stored(env.server)).length, 5)
  })

  it('streams progress events and the report for Accept: text/event-stream', async () => {
    const lines = 2000
    const chunks = [HEADER]
    for (let from = 0; from < lines; from += 100) chunks.push(numberedCsv(100, from))
    const body = chunks.join('')
    const response = await upload(
      env.server,
      '/todo-items/import',
      chunks,
      { ...csvHeaders, accept: 'text/event-stream', 'content-length': String(Buffer.byteLength(body)) },
      { betweenChunks: () => new Promise((resolve) => setTimeout(resolve, 25)) }
    )
    assert.equal(response.status, 200)
    assert.match(String(response.headers['content-type']), /^text\/event-stream/)
    const events = serverSentEvents(response.text)
    const progress = events.filter((event) => event.event === 'progress')
    assert.ok(progress.length >= 2, `${progress.length} progress events`)
    for (const { data } of progress) {
      assert.equal(data.bytesTotal, Buffer.byteLength(body))
      assert.ok(data.bytesRead > 0 && data.bytesRead <= data.bytesTotal)
      assert.ok(data.imported <= data.linesRead)
    }
    const last = events.at(-1)!
    assert.equal(last.event, 'report')
    assert.equal(last.data.imported, lines)
  })

  it('resumes a cut upload with the same Idempotency-Key: no line twice, none left out', async () => {
    const lines = 3000
    const chunks = [HEADER]
    for (let from = 0; from < lines; from += 100) chunks.push(numberedCsv(100, from))
    const headers = { ...csvHeaders, 'idempotency-key': `resume-${env.server.database}` }
    // The plugin's table, made by the first import with a key.
    const committed = async () =>
      Number(
        (
          await env.server
            .db('feathers_query_imports')
            .where({ key: headers['idempotency-key'] })
            .first()
            .catch(() => undefined)
        )?.line ?? 0
      )
    // Cut once a batch is in.
    const cut = await upload(env.server, '/todo-items/import', chunks, headers, {
      cutAfter: 20,
      betweenChunks: async () => {
        for (let tries = 0; tries < 50 && chunks.length > 0; tries++) {
          if ((await committed()) > 0) return
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
      }
    })
    assert.equal(cut.status, 0)
    const partial = await env.server.db('todo_items').count({ count: '*' })
    const before = Number(Object.values(partial[0])[0])
    assert.ok(before > 0 && before < lines, `${before} rows after the cut`)
    const resumed = await env.server.http('POST', '/todo-items/import', chunks.join(''), headers)
    assert.equal(resumed.status, 200, resumed.text)
    assert.equal(resumed.body.skipped + resumed.body.imported, lines)
    assert.ok(resumed.body.skipped > 0)
    const titles = (await stored(env.server)).map((row) => row.title)
    assert.equal(titles.length, lines, 'no duplicate')
    assert.equal(new Set(titles).size, lines, 'no gap')
    // The same import again: every line skipped.
    const again = await env.server.http('POST', '/todo-items/import', chunks.join(''), headers)
    assert.deepEqual([again.body.imported, again.body.skipped], [0, lines])
    const other = await env.server.http('POST', '/todo-items/import', chunks.join(''), {
      'content-type': 'application/x-ndjson',
      'idempotency-key': headers['idempotency-key']
    })
    assert.equal(other.status, 422)
    assert.equal((await stored(env.server)).length, lines)
  })

  it('lets a request with the key take over one still running: it stops, the new one goes on', async () => {
    const lines = 1000
    const chunks = [HEADER]
    for (let from = 0; from < lines; from += 100) chunks.push(numberedCsv(100, from))
    const headers = { ...csvHeaders, 'idempotency-key': `takeover-${env.server.database}` }
    let sent = 0
    let release: () => void = () => {}
    const stalled = new Promise<void>((resolve) => (release = resolve))
    // An upload that stops sending after three chunks and never ends, as a connection gone quiet.
    const first = upload(env.server, '/todo-items/import', chunks, headers, {
      betweenChunks: async () => {
        if (++sent === 3) await stalled
      }
    }).catch(() => ({ status: 0, text: '', headers: {} }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    const second = await env.server.http('POST', '/todo-items/import', chunks.join(''), headers)
    assert.equal(second.status, 200, second.text)
    assert.equal(second.body.skipped + second.body.imported, lines)
    const titles = (await stored(env.server)).map((row) => row.title)
    assert.equal(titles.length, lines)
    assert.equal(new Set(titles).size, lines)
    release()
    assert.notEqual((await first).status, 200)
  })

  it('reads a batch at a time: memory holds a batch, not the file (the rest waits on disk or in the client)', async () => {
    const description = 'x'.repeat(1000)
    const lines = 6000
    const chunks = [HEADER]
    for (let from = 0; from < lines; from += 50) {
      let text = ''
      for (let index = from; index < from + 50; index++) text += `"Item ${index}","${description}",false,1\n`
      chunks.push(text)
    }
    const lineBytes = Buffer.byteLength(chunks[1]) / 50
    const response = await upload(env.server, '/todo-items/import', chunks, {
      ...csvHeaders,
      accept: 'text/event-stream'
    })
    const events = serverSentEvents(response.text)
    assert.equal(events.at(-1)!.data.imported, lines)
    // What the server read beyond the lines it had done: Node's and the parser's buffers and one batch.
    const ahead = events
      .filter((event) => event.event === 'progress')
      .map(({ data }) => data.bytesRead - data.linesRead * lineBytes)
    assert.ok(ahead.length > 0)
    const body = lines * lineBytes
    assert.ok(Math.max(...ahead) < body / 4, `read ${Math.max(...ahead)} bytes ahead of a ${body} bytes body`)
  })
})

/** TodoItem with `authorize` (no priority of 100 or more) and a hook refusing titles starting with "Refused". */
const guardedApp: AppFactory = async (url) => {
  const resources = exampleResources.map((resource) =>
    resource === todoItemResource
      ? {
          ...todoItemResource,
          import: { batchSize: 4, maxRows: 20, maxLineBytes: 100, maxBytes: 4000, maxRowsPerSecond: 50 },
          authorize: () => ({ priority: { lt: 100 } })
        }
      : resource === subTaskResource
        ? { ...subTaskResource, import: { disabled: true } }
        : resource
  )
  const made = await exampleResourcesApp({ resources, quietErrors: true })(url)
  made.app.service('todo-items').hooks({
    before: {
      create: [
        stampCreation,
        (context: HookContext) => {
          if (String(context.data.title).startsWith('Refused')) throw new Forbidden('Refused by a hook')
          context.data = { ...context.data, description: `hooked ${context.data.title}` }
        }
      ]
    }
  })
  return made
}

forEachDatabase(
  'Import: every record through the create hooks and authorize',
  (env) => {
    beforeEach(() => clearTables(env.server.db))

    it('runs the hooks and authorize on each line; a refused line fails alone, its batch goes in', async () => {
      const body =
        HEADER +
        '"A",,false,1\n' +
        '"Refused B",,false,2\n' +
        '"C",,false,100\n' +
        '"D",,false,3\n' +
        '"E",,false,4\n' +
        '"F",,false,500\n'
      const response = await env.server.http('POST', '/todo-items/import', body, csvHeaders)
      assert.equal(response.status, 200, response.text)
      assert.equal(response.body.imported, 3, response.text)
      assert.deepEqual(response.body.errors, [
        { line: 3, field: null, message: 'Refused by a hook' },
        { line: 4, field: null, message: 'The new TodoItem is outside what you may access' },
        { line: 7, field: null, message: 'The new TodoItem is outside what you may access' }
      ])
      assert.deepEqual(await stored(env.server), [
        { title: 'A', description: 'hooked A', completed: false, priority: 1 },
        { title: 'D', description: 'hooked D', completed: false, priority: 3 },
        { title: 'E', description: 'hooked E', completed: false, priority: 4 }
      ])
    })
  },
  guardedApp
)

forEachDatabase(
  'Import: limits',
  (env) => {
    beforeEach(() => clearTables(env.server.db))

    it('refuses a body past maxBytes, more records than maxRows, a line past maxLineBytes', async () => {
      const declared = await env.server.http(
        'POST',
        '/todo-items/import',
        HEADER + 'x'.repeat(4000),
        csvHeaders
      )
      assert.equal(declared.status, 413)
      assert.equal((await stored(env.server)).length, 0)
      const rows = await env.server.http('POST', '/todo-items/import', HEADER + numberedCsv(21), csvHeaders)
      assert.equal(rows.status, 413, rows.text)
      assert.match(rows.body.message, /at most 20 records/)
      // What committed before the limit stays, and the report says so.
      assert.deepEqual([rows.body.data.report.lines, rows.body.data.report.imported], [21, 20])
      assert.equal((await stored(env.server)).length, 20)
      await clearTables(env.server.db)
      const long = await env.server.http(
        'POST',
        '/todo-items/import',
        HEADER + `"A",,false,1\n"${'y'.repeat(200)}",,false,1\n`,
        csvHeaders
      )
      assert.equal(long.status, 400)
      assert.match(long.body.message, /^Line 3: longer than the import's maxLineBytes/)
    })

    it('creates at most maxRowsPerSecond records a second', async () => {
      const started = performance.now()
      const response = await env.server.http(
        'POST',
        '/todo-items/import',
        HEADER + numberedCsv(20),
        csvHeaders
      )
      assert.equal(response.body.imported, 20)
      // 20 records at 50 a second: the last batch waits until 0.4 s have passed.
      assert.ok(performance.now() - started >= 390, `${performance.now() - started} ms`)
    })

    it('answers 405 where import is disabled, naming the option', async () => {
      const response = await env.server.http('POST', '/sub-tasks/import', 'title\n', csvHeaders)
      assert.equal(response.status, 405)
      assert.match(response.body.message, /import: \{ disabled: true \}/)
    })
  },
  guardedApp
)

forEachDatabase('Import: Feathers clients (REST and socket.io)', (env) => {
  beforeEach(() => clearTables(env.server.db))

  it('imports with the import method over REST and socket.io; the socket gets progress events', async () => {
    const rest = feathers()
    const restConnection = restClient(env.server.baseUrl).fetch(fetch)
    rest.configure(restConnection)
    rest.set('connection', restConnection)
    rest.configure(resourceClient('todo-items'))
    const todos = rest.service('todo-items') as unknown as ResourceClientService
    const report = await todos.import({ csv: HEADER + numberedCsv(3) })
    assert.equal(report.imported, 3)
    const dry = await todos.import({ records: [{ title: 'R' }, { title: 5 }] }, { query: { dryRun: true } })
    assert.deepEqual([dry.imported, dry.failed, dry.dryRun], [1, 1, true])

    const connection = io(env.server.baseUrl, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false
    })
    try {
      const socket = feathers()
      const socketConnection = socketioClient(connection)
      socket.configure(socketConnection)
      socket.set('connection', socketConnection)
      socket.configure(resourceClient('todo-items'))
      const progress: Array<{ imported: number }> = []
      socket
        .service('todo-items')
        .on('import-progress', (event: { imported: number }) => progress.push(event))
      const ndjson = Array.from({ length: 1200 }, (_, index) => JSON.stringify({ title: `S${index}` })).join(
        '\n'
      )
      const viaSocket = await (socket.service('todo-items') as unknown as ResourceClientService).import({
        ndjson
      })
      assert.equal(viaSocket.imported, 1200)
      assert.deepEqual(
        progress.map((event) => event.imported),
        [500, 1000, 1200]
      )
    } finally {
      connection.close()
    }
    assert.equal((await stored(env.server)).length, 1203)
  })
})
