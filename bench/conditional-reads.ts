import autocannon from 'autocannon'
import { get } from 'node:http'
import { benchDatabase, benchDatabaseNames, seedSubTasks, seedTodoItems } from './support/databases'
import { cpuMicrosOf, startScript } from './support/processes'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { loadFlags } from './support/flags'
import { printTable } from './support/table'

assertCompiledPlugin()

/**
 * A dashboard polling an unchanged list: the example server loaded by autocannon with the same GET, once
 * as a client without a cache sends it and once with the `If-None-Match` of the answer it already has (what a
 * browser sends for a `Cache-Control: no-cache` answer). Prints requests/s, CPU time and SQL statements per
 * request of both, and their ratio. The two take turns, each round starting with the other, and the round
 * with the median ratio is reported with the range of all rounds.
 *
 *   npm run bench:conditional -- --items 10000 --seconds 3 --rounds 3 --connections 20
 */
const { items, seconds, rounds, connections } = loadFlags({ seconds: 3, rounds: 3 })

const GRAPHQL_LIST =
  '{ todoItems(paging: {first: 25}, filter: {completed: {is: false}}) { totalCount edges { node { id title ' +
  'completed priority subTasks(paging: {first: 10}) { edges { node { id title } } } } } } }'

const scenarios = [
  { name: 'REST list, 25, one filter, totalCount', path: '/todo-items?completed=false&limit=25' },
  { name: 'GraphQL GET, 25 + 10 subTasks each', path: `/graphql?query=${encodeURIComponent(GRAPHQL_LIST)}` }
]

interface Result {
  rps: number
  cpu: number
  statements: number
  /** Answers other than the one expected (200 without a tag, 304 with it). */
  unexpected: number
}

/**
 * The tag of the first answer, asked with the headers autocannon sends (none besides Host): fetch would add
 * its own (User-Agent, Accept-Language), which are part of the tag.
 */
function firstTag(port: number, path: string) {
  return new Promise<{ status: number; etag?: string }>((resolve, reject) => {
    get(`http://127.0.0.1:${port}${path}`, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode!, etag: response.headers.etag }))
    }).on('error', reject)
  })
}

async function statementsSoFar(port: number) {
  return ((await (await fetch(`http://127.0.0.1:${port}/__statements`)).json()) as { statements: number })
    .statements
}

async function load(
  server: { port: number; pid: number },
  path: string,
  headers: Record<string, string>
): Promise<Result> {
  const expected = headers['if-none-match'] ? '3xx' : '2xx'
  const statementsBefore = await statementsSoFar(server.port)
  const cpuBefore = cpuMicrosOf(server.pid)
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', path, headers }]
  })
  const total = Math.max(1, result.requests.total)
  const cpu = (cpuMicrosOf(server.pid) - cpuBefore) / total
  // The statement counter's own request runs no SQL.
  const statements = ((await statementsSoFar(server.port)) - statementsBefore) / total
  const answered = (result as unknown as Record<string, number>)[expected] ?? 0
  return { rps: result.requests.average, cpu, statements, unexpected: result.requests.total - answered }
}

async function main() {
  const rows: string[][] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    const script = startScript('support/example-server.ts', { DATABASE_URL: database.url })
    try {
      await seedTodoItems(database.db, items, { spanDays: 730 })
      await seedSubTasks(database.db, 10)
      const { child, payload } = await script.ready
      const server = { port: Number(payload), pid: child.pid! }
      for (const scenario of scenarios) {
        const { status, etag } = await firstTag(server.port, scenario.path)
        if (status !== 200 || !etag) throw new Error(`${scenario.name}: ${status}, ETag ${etag}`)
        const plain = {}
        const revalidating = { 'if-none-match': etag }
        // Warm-up of both, then rounds taking turns.
        await load(server, scenario.path, plain)
        await load(server, scenario.path, revalidating)
        const measured: Array<{ without: Result; with: Result; ratio: number }> = []
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? [plain, revalidating] : [revalidating, plain]
          const results = new Map<object, Result>()
          for (const headers of order) results.set(headers, await load(server, scenario.path, headers))
          const without = results.get(plain)!
          const withTag = results.get(revalidating)!
          measured.push({ without, with: withTag, ratio: withTag.rps / without.rps })
        }
        const sorted = [...measured].sort((a, b) => a.ratio - b.ratio)
        const median = sorted[Math.floor(sorted.length / 2)]
        rows.push([
          name,
          scenario.name,
          median.ratio.toFixed(2),
          `${sorted[0].ratio.toFixed(2)}–${sorted[sorted.length - 1].ratio.toFixed(2)}`,
          `${median.with.rps.toFixed(0)} / ${median.without.rps.toFixed(0)}`,
          `${median.with.cpu.toFixed(0)} / ${median.without.cpu.toFixed(0)}`,
          `${median.with.statements.toFixed(2)} / ${median.without.statements.toFixed(2)}`,
          String(measured.reduce((sum, round) => sum + round.with.unexpected + round.without.unexpected, 0))
        ])
      }
    } finally {
      script.child.kill()
      await database.drop()
    }
  }
  const header = [
    'db',
    'scenario',
    'req/s ratio (304 / 200)',
    'range',
    'req/s (304 / 200)',
    'CPU µs/req (304 / 200)',
    'SQL/req (304 / 200)',
    'unexpected answers'
  ]
  printTable([header, ...rows])
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
