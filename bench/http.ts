import autocannon from 'autocannon'
import { benchDatabase, benchDatabaseNames, seedSubTasks, seedTodoItems } from './support/databases'
import { startScript } from './support/processes'

/**
 * HTTP benchmarks: the example server against a minimal Koa + knex handler running the same SQL, both in
 * processes of their own, loaded by autocannon on loopback. Prints requests/s, p50 and p99 latency, and the
 * ratio to the baseline measured in the same run. Shared machines drift by tens of percent within a minute,
 * so the two servers take turns (ours, baseline, ours, baseline, …) and the round with the median ratio is
 * reported: both sides of a ratio are measured under the same conditions.
 *
 *   npm run bench:http -- --items 10000 --seconds 5 --rounds 3 --connections 10
 */
function flag(name: string, fallback: number) {
  const index = process.argv.indexOf(`--${name}`)
  return index === -1 ? fallback : Number(process.argv[index + 1])
}

const items = flag('items', 10_000)
const seconds = flag('seconds', 5)
const rounds = Math.max(1, flag('rounds', 3))
const connections = flag('connections', 10)

const NESTED_QUERY = `{ todoItems(paging: {first: 25}) { edges { node { id title subTasks { edges { node { id title } } } } } } }`

interface Scenario {
  name: string
  goal: number
  server: autocannon.Request & { path: string }
  baseline: autocannon.Request & { path: string }
}

const scenarios: Scenario[] = [
  {
    name: 'REST list, 25, one filter',
    goal: 0.8,
    server: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    baseline: { method: 'GET', path: '/todo-items?completed=true&limit=25' }
  },
  {
    name: 'REST get by id',
    goal: 0.8,
    server: { method: 'GET', path: '/todo-items/4242' },
    baseline: { method: 'GET', path: '/todo-items/4242' }
  },
  {
    name: 'GraphQL 25 items + subTasks',
    goal: 0.5,
    server: {
      method: 'POST',
      path: '/graphql',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: NESTED_QUERY })
    },
    baseline: { method: 'GET', path: '/nested' }
  }
]

interface Result {
  rps: number
  p50: number
  p99: number
  errors: number
}

async function load(port: number, request: autocannon.Request & { path: string }, duration = seconds): Promise<Result> {
  const options = { url: `http://127.0.0.1:${port}`, connections, duration, requests: [request] }
  const result = await autocannon(options)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts
  }
}

async function statementsPerRequest(port: number, request: Scenario['server']) {
  const count = async () => ((await (await fetch(`http://127.0.0.1:${port}/__statements`)).json()) as { statements: number }).statements
  const before = await count()
  const runs = 20
  for (let run = 0; run < runs; run++) {
    await fetch(`http://127.0.0.1:${port}${request.path}`, { method: request.method, headers: request.headers as Record<string, string>, body: request.body as string })
  }
  return ((await count()) - before) / runs
}

async function main() {
  console.log(
    `HTTP benchmarks: ${items.toLocaleString()} todo items × 10 sub tasks, ${connections} connections, ` +
      `${rounds} rounds of ${seconds} s per server, median-ratio round shown`
  )
  const rows: string[][] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    const started = [startScript('support/example-server.ts', { DATABASE_URL: database.url }), startScript('support/baseline-server.ts', { DATABASE_URL: database.url })]
    try {
      await seedTodoItems(database.db, items)
      await seedSubTasks(database.db, 10)
      const [server, baseline] = await Promise.all(started.map((script) => script.ready))
      for (const scenario of scenarios) {
        // Warm-up of both (JIT, statement caches), then the rounds.
        await load(Number(server.payload), scenario.server, 2)
        await load(Number(baseline.payload), scenario.baseline, 2)
        const measured: Array<{ ours: Result; theirs: Result; ratio: number }> = []
        for (let round = 0; round < rounds; round++) {
          const ours = await load(Number(server.payload), scenario.server)
          const theirs = await load(Number(baseline.payload), scenario.baseline)
          measured.push({ ours, theirs, ratio: ours.rps / theirs.rps })
        }
        measured.sort((a, b) => a.ratio - b.ratio)
        // The lower middle round when the count is even: a median that flatters nobody.
        const { ours, theirs, ratio } = measured[Math.floor((measured.length - 1) / 2)]
        const errors = measured.reduce((sum, round) => sum + round.ours.errors + round.theirs.errors, 0)
        const statements = await statementsPerRequest(Number(server.payload), scenario.server)
        rows.push([
          name,
          scenario.name,
          ratio.toFixed(2),
          `≥ ${scenario.goal}`,
          ours.rps.toFixed(0),
          theirs.rps.toFixed(0),
          `${ours.p50} / ${ours.p99}`,
          `${theirs.p50} / ${theirs.p99}`,
          statements.toFixed(1),
          String(errors)
        ])
      }
    } finally {
      for (const script of started) script.child.kill()
      await database.drop()
    }
  }
  const header = ['db', 'scenario', 'ratio', 'goal', 'req/s', 'baseline req/s', 'p50/p99 ms', 'baseline p50/p99', 'SQL/req', 'errors']
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)) + 2)
  console.log('\n' + [header, ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('')).join('\n'))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
