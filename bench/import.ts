import http from 'node:http'
import type { Knex } from 'knex'
import { benchDatabase, benchDatabaseNames } from './support/databases'
import { formatMb, rssOf, sampleRss, startScript } from './support/processes'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag } from './support/flags'
import { printTable } from './support/table'
import { rowsPerInsert } from '../test/support/seed'

assertCompiledPlugin()

/**
 * Import benchmark: N todo items as CSV posted to `POST /todo-items/import` of the example server (each
 * record through the create hooks, a batch of 500 per transaction), against a knex batch insert of the same
 * rows in this process, per database. Figures: rows/s, their ratio, the server's peak RSS growth during the
 * import. Then an import with an Idempotency-Key cut halfway (the request destroyed) and sent again whole:
 * the table must hold every line exactly once.
 *
 *   npm run bench:import -- --rows 1000000      (MariaDB with MYSQL_URL, PostgreSQL with PG_URL)
 */
const rows = flag('rows', 1_000_000)
const HEADER = 'title,description,completed,priority\n'
const LINES_PER_CHUNK = 1000

/** The CSV's lines `from` to `from + count`, as the body's chunks are made: on demand, never all at once. */
function csvChunk(from: number, count: number) {
  let text = ''
  for (let index = from; index < from + count; index++) {
    text += `"Item ${index}","Description of item ${index}",${index % 2 === 0},${index % 5}\n`
  }
  return text
}

/** POSTs the CSV, written as the server takes it (back-pressure); `cutAt`: destroys the request at that line. */
function postCsv(port: number, headers: Record<string, string>, cutAt?: number) {
  return new Promise<{ seconds: number; status: number; body: string }>((resolve, reject) => {
    const started = performance.now()
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/todo-items/import',
        method: 'POST',
        headers: { 'content-type': 'text/csv', ...headers }
      },
      (response) => {
        let body = ''
        response.on('data', (chunk) => (body += chunk))
        response.on('end', () =>
          resolve({ seconds: (performance.now() - started) / 1000, status: response.statusCode!, body })
        )
      }
    )
    request.on('error', (error) =>
      cutAt === undefined ? reject(error) : resolve({ seconds: 0, status: 0, body: '' })
    )
    ;(async () => {
      request.write(HEADER)
      for (let from = 0; from < rows; from += LINES_PER_CHUNK) {
        if (cutAt !== undefined && from >= cutAt) {
          // Long enough for the batches read so far to commit, as a dropped connection would find them.
          await new Promise((wait) => setTimeout(wait, 500))
          request.destroy()
          return
        }
        if (!request.write(csvChunk(from, Math.min(LINES_PER_CHUNK, rows - from)))) {
          await new Promise((drained) => request.once('drain', drained))
        }
      }
      request.end()
    })().catch(reject)
  })
}

async function count(db: Knex) {
  const [row] = await db('todo_items').count({ count: '*' }).countDistinct({ distinct: 'title' })
  return { count: Number(row.count), distinct: Number(row.distinct) }
}

async function measureServer(url: string, db: Knex) {
  await db('todo_items').delete()
  const { ready, child } = startScript('support/example-server.ts', { DATABASE_URL: url })
  const { payload } = await ready
  try {
    const idle = rssOf(child.pid!)
    const sampler = sampleRss(child.pid!)
    // The upload is read ahead of the writes, so it arrives within Node's requestTimeout (5 minutes); one
    // held back longer (past import.readAheadBytes) is cut with a 408, and the same body under the same key
    // goes on after what committed, as a client would resume it. The table counts such resumes.
    const headers = { 'idempotency-key': `bench-whole-${Date.now()}` }
    let seconds = 0
    let imported = 0
    let resumes = 0
    for (;;) {
      const answer = await postCsv(Number(payload), headers)
      seconds += answer.seconds
      if (answer.status === 408 && resumes < 10) {
        resumes++
        continue
      }
      if (answer.status !== 200)
        throw new Error(`import answered ${answer.status}: ${answer.body.slice(0, 500)}`)
      const report = JSON.parse(answer.body) as { imported: number; skipped: number }
      imported = report.imported + report.skipped
      break
    }
    sampler.stop()
    const stored = await count(db)
    if (imported !== rows || stored.count !== rows || stored.distinct !== rows) {
      throw new Error(
        `imported ${imported}, stored ${stored.count} (${stored.distinct} distinct), expected ${rows}`
      )
    }
    return { seconds, rssGrowth: sampler.peak() - idle, resumes }
  } finally {
    child.kill()
  }
}

/** The same rows through knex's batchInsert, 10,000 rows per transaction, with what the hooks would set. */
async function measureBaseline(db: Knex) {
  await db('todo_items').delete()
  const started = performance.now()
  const idle = process.memoryUsage().rss
  let peak = idle
  const step = 10_000
  for (let from = 0; from < rows; from += step) {
    const now = new Date()
    const batch = []
    for (let index = from; index < Math.min(rows, from + step); index++) {
      batch.push({
        title: `Item ${index}`,
        description: `Description of item ${index}`,
        completed: index % 2 === 0,
        priority: index % 5,
        created: now,
        updated: now,
        createdBy: null,
        updatedBy: null
      })
    }
    await db.batchInsert('todo_items', batch, rowsPerInsert(db))
    peak = Math.max(peak, process.memoryUsage().rss)
  }
  const seconds = (performance.now() - started) / 1000
  if ((await count(db)).count !== rows) throw new Error('baseline stored another number of rows')
  return { seconds, rssGrowth: peak - idle }
}

/** Cut halfway, then sent again whole with the same key: every line once, none missing. */
async function cutAndResume(url: string, db: Knex, name: string) {
  await db('todo_items').delete()
  const { ready, child } = startScript('support/example-server.ts', { DATABASE_URL: url })
  const { payload } = await ready
  try {
    const headers = { 'idempotency-key': `bench-${name}-${Date.now()}` }
    await postCsv(Number(payload), headers, Math.floor(rows / 2))
    const afterCut = await count(db)
    let resumed = await postCsv(Number(payload), headers)
    for (let again = 0; resumed.status === 408 && again < 10; again++) {
      resumed = await postCsv(Number(payload), headers)
    }
    if (resumed.status !== 200) throw new Error(`resume answered ${resumed.status}: ${resumed.body}`)
    const report = JSON.parse(resumed.body) as { imported: number; skipped: number }
    const stored = await count(db)
    const ok = stored.count === rows && stored.distinct === rows
    if (!ok)
      throw new Error(`after the resume: ${stored.count} rows, ${stored.distinct} distinct, expected ${rows}`)
    return `cut at ${afterCut.count.toLocaleString()} rows; resumed: ${report.skipped.toLocaleString()} skipped, ${report.imported.toLocaleString()} imported; ${stored.count.toLocaleString()} rows, no duplicate, no gap`
  } finally {
    child.kill()
  }
}

async function main() {
  console.log(`Import benchmark, ${rows.toLocaleString()} rows`)
  const table = [
    [
      'db',
      'HTTP import',
      'knex batchInsert',
      'ratio',
      'import RSS growth',
      'baseline RSS growth',
      'resumed after 408'
    ]
  ]
  const resumes: string[] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    try {
      console.log(`${name}: baseline`)
      const baseline = await measureBaseline(database.db)
      console.log(`${name}: import`)
      const server = await measureServer(database.url, database.db)
      const rate = (seconds: number) => rows / seconds
      table.push([
        name,
        `${Math.round(rate(server.seconds)).toLocaleString()} rows/s`,
        `${Math.round(rate(baseline.seconds)).toLocaleString()} rows/s`,
        (rate(server.seconds) / rate(baseline.seconds)).toFixed(3),
        formatMb(server.rssGrowth),
        formatMb(baseline.rssGrowth),
        String(server.resumes)
      ])
      console.log(`${name}: cut and resume`)
      resumes.push(`${name}: ${await cutAndResume(database.url, database.db, name)}`)
    } finally {
      await database.drop()
    }
  }
  printTable(table)
  console.log('\n' + resumes.join('\n'))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
