import http from 'node:http'
import { benchDatabase, benchDatabaseNames, seedTodoItems } from './support/databases'
import { formatMb, sampleRss, startScript, rssOf } from './support/processes'
import { COMPARED_BYTES } from './support/export-baseline'
import { assertCompiledPlugin } from './support/compiled-plugin'

assertCompiledPlugin()

/**
 * CSV export benchmark: N todo items exported over HTTP by the example server, against a baseline that
 * streams the same SELECT through knex into csv-stringify with no HTTP and writes the same file (checked:
 * the first rows of both must be equal but for the computed `age`, which depends on the clock). Both run in
 * their own process; the figures are rows/s and peak RSS growth during the export.
 *
 *   npm run bench:export -- --rows 1000000      (MariaDB with MYSQL_URL, PostgreSQL with PG_URL)
 */
const rows = Number(process.argv[process.argv.indexOf('--rows') + 1]) || 1_000_000

interface Measure {
  seconds: number
  rows: number
  rssGrowth: number
  /** The file's first bytes. */
  head: string
}

/** Downloads the export, counting lines and keeping only the first bytes. */
function download(port: number): Promise<{ seconds: number; lines: number; head: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    let lines = 0
    let head = ''
    http
      .get({ host: '127.0.0.1', port, path: '/todo-items/export' }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`export answered ${response.statusCode}`))
        response.on('data', (chunk: Buffer) => {
          if (head.length < COMPARED_BYTES) head += chunk.toString().slice(0, COMPARED_BYTES - head.length)
          for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) lines++
        })
        response.on('end', () =>
          resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, lines, head })
        )
        response.on('error', reject)
      })
      .on('error', reject)
  })
}

async function measureServer(url: string): Promise<Measure> {
  const { ready, child } = startScript('support/example-server.ts', { DATABASE_URL: url })
  const { payload } = await ready
  try {
    // A warm-up export of the first rows would skew nothing here; memory is read relative to idle.
    const idle = rssOf(child.pid!)
    const sampler = sampleRss(child.pid!)
    const { seconds, lines, head } = await download(Number(payload))
    sampler.stop()
    // Header and records may contain quoted newlines; the seeded data has none.
    return { seconds, rows: lines - 1, rssGrowth: sampler.peak() - idle, head }
  } finally {
    child.kill()
  }
}

async function measureBaseline(url: string): Promise<Measure> {
  const started = startScript('support/export-baseline.ts', { DATABASE_URL: url })
  const { child } = await started.ready
  const idle = rssOf(child.pid!)
  const sampler = sampleRss(child.pid!)
  const done = new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = started.lines.find((candidate) => candidate.startsWith('DONE'))
      if (line) {
        clearInterval(timer)
        resolve(line.slice(5))
      }
    }, 10)
    child.on('exit', (code) => code && reject(new Error(`baseline exited with ${code}`)))
  })
  child.send('go')
  const result = JSON.parse(await done) as { seconds: number; head: string }
  sampler.stop()
  child.kill()
  return { seconds: result.seconds, rows, rssGrowth: sampler.peak() - idle, head: result.head }
}

/**
 * Throws unless both files begin with the same header and the same records, the `age` column aside (each
 * side computes it from its own clock). Complete lines only: the kept bytes end inside a record.
 */
function checkSameFile(server: string, baseline: string) {
  const lines = (text: string) => text.split('\n').slice(0, -1)
  const [ours, theirs] = [lines(server), lines(baseline)]
  // `age` follows `updated`, the only date followed by a number.
  const withoutAge = (line: string) => line.replace(/Z,-?\d+,/, 'Z,,')
  const compared = Math.min(ours.length, theirs.length)
  if (compared < 100) throw new Error(`only ${compared} lines to compare`)
  for (let index = 0; index < compared; index++) {
    if (withoutAge(ours[index]) !== withoutAge(theirs[index])) {
      throw new Error(`line ${index + 1} differs:\n  export:   ${ours[index]}\n  baseline: ${theirs[index]}`)
    }
  }
}

async function bestOf(runs: number, measure: () => Promise<Measure>) {
  const results: Measure[] = []
  for (let run = 0; run < runs; run++) results.push(await measure())
  return results.sort((a, b) => a.seconds - b.seconds)[0]
}

async function main() {
  console.log(`CSV export benchmark, ${rows.toLocaleString()} rows`)
  const table: string[][] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    try {
      console.log(`${name}: seeding`)
      await seedTodoItems(database.db, rows, { log: console.log })
      // The best of three runs each: the machine is shared, the best run is the least disturbed one.
      const baseline = await bestOf(3, () => measureBaseline(database.url))
      const server = await bestOf(3, () => measureServer(database.url))
      if (server.rows !== rows) throw new Error(`export returned ${server.rows} rows, expected ${rows}`)
      checkSameFile(server.head, baseline.head)
      const rate = (measure: Measure) => measure.rows / measure.seconds
      table.push([
        name,
        `${Math.round(rate(server)).toLocaleString()} rows/s`,
        `${Math.round(rate(baseline)).toLocaleString()} rows/s`,
        (rate(server) / rate(baseline)).toFixed(2),
        formatMb(server.rssGrowth),
        formatMb(baseline.rssGrowth)
      ])
    } finally {
      await database.drop()
    }
  }
  const header = [
    'db',
    'HTTP export',
    'knex→csv baseline',
    'speed ratio',
    'server RSS growth',
    'baseline RSS growth'
  ]
  console.log('\n' + [header, ...table].map((row) => row.map((cell) => cell.padEnd(20)).join('')).join('\n'))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
