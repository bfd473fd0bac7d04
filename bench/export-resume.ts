import http from 'node:http'
import { benchDatabase, benchDatabaseNames, seedTodoItems } from './support/databases'
import { startScript } from './support/processes'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag } from './support/flags'
import { printTable } from './support/table'

assertCompiledPlugin()

/**
 * A resumable export cut and resumed: N todo items exported by the example server with `resumable=true`,
 * the connection dropped at 70% of the file, the rest asked for with the last complete row's token.
 * Checked: the ids of the part kept and the rest are exactly those of an uncut export, in order (no
 * duplicate, no gap). Measured against an uncut export in the same run: what the tokens cost (bytes and
 * time, against a plain export), and what resuming costs (the first byte of the rest against the first
 * byte of an export from the start, and the rest's time against the 30% of an uncut export it replaces),
 * each the quickest of three runs.
 *
 *   npm run bench:export-resume -- --rows 1000000      (MariaDB with MYSQL_URL, PostgreSQL with PG_URL)
 */
const rows = flag('rows', 1_000_000)
const CUT_AT = 0.7
const RUNS = 3

interface Download {
  seconds: number
  firstByteSeconds: number
  bytes: number
  /** The first cell of each complete line (the id; the header's `"id"` for a CSV's first line). */
  ids: string[]
  /** The last complete line. */
  last: string
}

/** Downloads `path`, keeping each line's id; with `cutAfter`, drops the connection once that many bytes came. */
function download(port: number, path: string, cutAfter = Infinity): Promise<Download> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9
    let firstByteSeconds = 0
    let bytes = 0
    let pending = ''
    let last = ''
    const ids: string[] = []
    const finish = () => resolve({ seconds: seconds(), firstByteSeconds, bytes, ids, last })
    const request = http.get({ host: '127.0.0.1', port, path }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`export answered ${response.statusCode}`))
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        if (bytes === 0) firstByteSeconds = seconds()
        const kept = bytes + chunk.length > cutAfter ? chunk.slice(0, cutAfter - bytes) : chunk
        bytes += kept.length
        const lines = (pending + kept).split('\n')
        pending = lines.pop()!
        for (const line of lines) ids.push(line.slice(0, line.indexOf(',')))
        if (lines.length) last = lines[lines.length - 1]
        if (bytes >= cutAfter) {
          request.destroy()
          finish()
        }
      })
      response.on('end', finish)
      response.on('error', (error) => (bytes >= cutAfter ? undefined : reject(error)))
    })
    request.on('error', (error) => (bytes >= cutAfter ? undefined : reject(error)))
  })
}

/** Where the two id sequences part: the duplicates and gaps of `parts` against `whole`. */
function compareIds(whole: string[], parts: string[]) {
  const seen = new Set<string>()
  let duplicates = 0
  for (const id of parts) {
    if (seen.has(id)) duplicates++
    seen.add(id)
  }
  const gaps = whole.filter((id) => !seen.has(id)).length
  const inOrder = whole.length === parts.length && whole.every((id, index) => parts[index] === id)
  return { duplicates, gaps, inOrder }
}

/** The quickest of `runs` downloads: the machine is shared, the quickest run is the least disturbed. */
async function quickest(runs: number, run: () => Promise<Download>) {
  let best: Download | undefined
  for (let index = 0; index < runs; index++) {
    const result = await run()
    if (!best || result.seconds < best.seconds) best = result
  }
  return best!
}

async function measure(url: string) {
  const { ready, child } = startScript('support/example-server.ts', { DATABASE_URL: url })
  const port = Number((await ready).payload)
  try {
    // A warm-up: the first export of a fresh process pays for compiling its code paths.
    await download(port, '/todo-items/export?resumable=true')
    const plain = await quickest(RUNS, () => download(port, '/todo-items/export'))
    const whole = await quickest(RUNS, () => download(port, '/todo-items/export?resumable=true'))
    const cut = await download(port, '/todo-items/export?resumable=true', Math.floor(whole.bytes * CUT_AT))
    const token = cut.last.slice(cut.last.lastIndexOf(',') + 1)
    const rest = await quickest(RUNS, () =>
      download(port, `/todo-items/export?resumable=true&after=${token}`)
    )
    return { plain, whole, cut, rest, ...compareIds(whole.ids, [...cut.ids, ...rest.ids]) }
  } finally {
    child.kill()
  }
}

async function main() {
  console.log(`Resumable export benchmark, ${rows.toLocaleString()} rows, cut at ${CUT_AT * 100}%`)
  const table = [
    [
      'db',
      'plain',
      'resumable',
      'bytes ratio',
      'first byte: rest / start',
      'rest / its share of uncut',
      'duplicates',
      'gaps'
    ]
  ]
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    try {
      console.log(`${name}: seeding`)
      await seedTodoItems(database.db, rows, { log: console.log })
      const result = await measure(database.url)
      const { plain, whole, rest } = result
      if (whole.ids.length !== rows + 1) throw new Error(`export returned ${whole.ids.length - 1} rows`)
      if (!result.inOrder) throw new Error('the parts joined are not the uncut export, in order')
      const rate = (download: Download) => `${Math.round(rows / download.seconds).toLocaleString()} rows/s`
      const restShare = rest.ids.length / (whole.ids.length - 1)
      table.push([
        name,
        rate(plain),
        rate(whole),
        (whole.bytes / plain.bytes).toFixed(2),
        `${(rest.firstByteSeconds * 1000).toFixed(1)} / ${(whole.firstByteSeconds * 1000).toFixed(1)} ms`,
        (rest.seconds / (whole.seconds * restShare)).toFixed(2),
        String(result.duplicates),
        String(result.gaps)
      ])
    } finally {
      await database.drop()
    }
  }
  printTable(table)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
