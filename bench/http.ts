import autocannon from 'autocannon'
import { benchDatabase, benchDatabaseNames } from './support/databases'
import { cpuMicrosOf, formatMb, rssOf, sampleRss } from './support/processes'
import { startBenchServers } from './support/bench-servers'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { feathersDifference } from './support/feathers-answer'
import { loadFlags } from './support/flags'
import { printTable } from './support/table'

assertCompiledPlugin()

/**
 * HTTP benchmarks: the example server against a minimal Koa + knex handler running the same SQL, both in
 * processes of their own, loaded by autocannon on loopback. Prints requests/s, p50 and p99 latency, and the
 * ratio to the baseline measured in the same run. Shared machines drift by tens of percent within a minute,
 * so the servers take turns, each round starting with the next one (ours, baseline; baseline, ours; …),
 * and the round with the median ratio is reported with the spread of all rounds: both sides of a ratio are
 * measured under the same conditions.
 * Before measuring, both servers' answers are compared where they should be equal. Peak RSS of each server
 * is sampled throughout. Each side's CPU time per request (from /proc) is printed too: it varies by a few
 * percent where requests per second vary by tens, and on a machine whose cores the database and autocannon
 * share it says what the server itself costs.
 * The GraphQL scenarios run a third server in the same rounds: the GraphQL floor (graphql-http and graphql-js
 * over the baseline's reads, `support/graphql-floor-server.ts`). Its table says what the plugin costs over the
 * libraries it is built on (ours / floor) and what those libraries cost over no GraphQL at all (floor / raw).
 * Two more baselines run in the same rounds where they can serve a scenario: the bare handler (the floor of
 * any Node server: one Koa middleware, hand-written SQL, plain GETs, `support/bare-server.ts`) on the REST
 * scenarios and the plain GraphQL ones, and the app a Feathers user would write instead (a KnexService with
 * the CLI's schema hooks, `support/feathers-server.ts`) on REST's list and get. Their table gives req/s and
 * CPU per request of each, and ours over each.
 *
 *   npm run bench:http -- --items 10000 --seconds 5 --rounds 3 --connections 20 [--only aggregate]
 */
const { items, seconds, rounds, connections } = loadFlags({ seconds: 5, rounds: 3 })
/** Only the scenarios whose name holds this text. */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : ''

const LIST_FIELDS = 'id title completed created priority'
const LIST = `todoItems(paging: {first: 25}, filter: {completed: {is: false}})`

interface Scenario {
  name: string
  goal: number
  server: autocannon.Request & { path: string }
  baseline: autocannon.Request & { path: string }
  /** The same request to the GraphQL floor server, for a GraphQL scenario. */
  floor?: autocannon.Request & { path: string }
  /** The request to the bare handler, which answers the same JSON to a plain GET. */
  bare?: autocannon.Request & { path: string }
  /** The request to the Feathers app, in Feathers' query syntax. */
  feathers?: autocannon.Request & { path: string }
}

/** A GraphQL POST of `query`, to `path` (the baseline's handler of that scenario receives the same request). */
const graphql = (query: string, path = '/graphql') => ({
  method: 'POST' as const,
  path,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query })
})

/** The same GraphQL request to the example server, the GraphQL floor and, at its handler's path, the baseline. */
const graphqlBoth = (query: string, baselinePath: string) => ({
  server: graphql(query),
  baseline: graphql(query, baselinePath),
  floor: graphql(query)
})

/** The scenarios of issue 22's side-by-side run, plus REST's list and get. */
const scenarios: Scenario[] = [
  {
    name: 'REST list, 25, one filter',
    goal: 0.9,
    server: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    baseline: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    bare: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    // Without $sort a KnexService pages in no set order; ours and the raw handler's pages are by id.
    feathers: { method: 'GET', path: '/todo-items?completed=true&$limit=25&$sort[id]=1' }
  },
  {
    name: 'REST get by id',
    goal: 0.9,
    server: { method: 'GET', path: '/todo-items/4242' },
    baseline: { method: 'GET', path: '/todo-items/4242' },
    bare: { method: 'GET', path: '/todo-items/4242' },
    feathers: { method: 'GET', path: '/todo-items/4242' }
  },
  {
    name: 'GraphQL list, 25, 5 fields',
    goal: 0.9,
    ...graphqlBoth(`{ ${LIST} { edges { node { ${LIST_FIELDS} } } } }`, '/graphql-list'),
    bare: { method: 'GET', path: '/graphql-list' }
  },
  {
    name: 'GraphQL list + 10 subTasks each',
    goal: 0.9,
    ...graphqlBoth(
      `{ ${LIST} { edges { node { ${LIST_FIELDS} subTasks(paging: {first: 10}) { edges { node { id title } } } } } } }`,
      '/graphql-nested'
    )
  },
  {
    name: 'GraphQL todoItem(id: 42)',
    goal: 0.8,
    ...graphqlBoth('{ todoItem(id: 42) { id title } }', '/graphql-one'),
    bare: { method: 'GET', path: '/graphql-one' }
  },
  {
    name: 'aggregate by completed',
    goal: 0.9,
    ...graphqlBoth(
      '{ todoItemAggregate { groupBy { completed } count { id } avg { priority } } }',
      '/aggregate-completed'
    )
  },
  {
    name: 'aggregate by created(by: DAY)',
    goal: 0.9,
    ...graphqlBoth('{ todoItemAggregate { groupBy { created(by: DAY) } count { id } } }', '/aggregate-day')
  }
]

interface Result {
  rps: number
  p50: number
  p99: number
  errors: number
  /** The server's CPU time per request, in microseconds. */
  cpu: number
}

async function load(
  server: { port: number; pid: number },
  request: autocannon.Request & { path: string },
  duration = seconds
): Promise<Result> {
  const options = { url: `http://127.0.0.1:${server.port}`, connections, duration, requests: [request] }
  const cpuBefore = cpuMicrosOf(server.pid)
  const result = await autocannon(options)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
    cpu: (cpuMicrosOf(server.pid) - cpuBefore) / Math.max(1, result.requests.total)
  }
}

function send(port: number, request: Scenario['server']) {
  return fetch(`http://127.0.0.1:${port}${request.path}`, {
    method: request.method,
    headers: request.headers as Record<string, string>,
    body: request.body as string
  })
}

async function statementsPerRequest(port: number, request: Scenario['server']) {
  const count = async () =>
    ((await (await fetch(`http://127.0.0.1:${port}/__statements`)).json()) as { statements: number })
      .statements
  // Requests autocannon left in flight (or queued behind the plugin's concurrency limit) when the last round
  // ended still run their statements: counting starts once none has run for 200 ms (or after 10 s).
  let before = await count()
  for (let settled = false, waits = 0; !settled && waits < 50; waits++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    const now = await count()
    settled = now === before
    before = now
  }
  const runs = 20
  for (let run = 0; run < runs; run++) await send(port, request)
  return ((await count()) - before) / runs
}

/** `age` (milliseconds since creation) depends on the moment each server answered. */
const withoutAge = (key: string, value: unknown) => (key === 'age' ? undefined : value)

/** A benchmark of different answers would compare nothing: every server must answer the same JSON. */
async function checkSameAnswer(
  scenario: Scenario,
  port: number,
  baselinePort: number,
  ports: { floor?: number; bare?: number; feathers?: number }
) {
  const theirs = (await (await send(baselinePort, scenario.baseline)).json()) as Record<string, unknown>
  const others = [{ name: 'the example', port, request: scenario.server }]
  if (scenario.floor && ports.floor)
    others.push({ name: 'the GraphQL floor', port: ports.floor, request: scenario.floor })
  if (scenario.bare && ports.bare)
    others.push({ name: 'the bare handler', port: ports.bare, request: scenario.bare })
  if (scenario.feathers && ports.feathers) {
    const difference = feathersDifference(
      (await (await send(ports.feathers, scenario.feathers)).json()) as Record<string, unknown>,
      theirs
    )
    if (difference) throw new Error(`${scenario.name}: the Feathers app answers differently: ${difference}`)
  }
  for (const other of others) {
    const answer = await (await send(other.port, other.request)).json()
    if (JSON.stringify(answer, withoutAge) !== JSON.stringify(theirs, withoutAge)) {
      throw new Error(
        `${scenario.name}: ${other.name} and the baseline answer differently\n` +
          `${JSON.stringify(answer).slice(0, 400)}\n${JSON.stringify(theirs).slice(0, 400)}`
      )
    }
  }
}

/** The middle value: the lower one of an even count, a median that flatters nobody. */
function median(values: number[]) {
  return [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]
}

/** The median of ratios, with their range. */
function medianAndRange(values: number[]) {
  return `${median(values).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`
}

async function main() {
  console.log(
    `HTTP benchmarks: ${items.toLocaleString()} todo items over two years × 10 sub tasks, ${connections} connections, ` +
      `${rounds} rounds of ${seconds} s per server, median-ratio round shown with the range of all rounds`
  )
  const rows: string[][] = []
  const floorRows: string[][] = []
  const baselineRows: string[][] = []
  const memory: string[][] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    let stop = () => {}
    try {
      const pair = await startBenchServers(database, items, {
        graphqlFloor: true,
        bare: true,
        feathers: true
      })
      stop = pair.stop
      const { server: ours, baseline: theirs, graphqlFloor, bare, feathers } = pair
      const [port, baselinePort] = [ours.port, theirs.port]
      const idle = [rssOf(ours.pid), rssOf(theirs.pid)]
      const samplers = [sampleRss(ours.pid, 100), sampleRss(theirs.pid, 100)]
      for (const scenario of scenarios.filter((each) => each.name.includes(only))) {
        await checkSameAnswer(scenario, port, baselinePort, {
          floor: graphqlFloor?.port,
          bare: bare?.port,
          feathers: feathers?.port
        })
        const floor =
          scenario.floor && graphqlFloor ? { server: graphqlFloor, request: scenario.floor } : undefined
        // The servers of this scenario: ours, the raw handler, and each other baseline that can serve it.
        const sides = [
          { key: 'mine', server: ours, request: scenario.server },
          { key: 'base', server: theirs, request: scenario.baseline },
          ...(floor ? [{ key: 'floor', server: floor.server, request: floor.request }] : []),
          ...(scenario.bare && bare ? [{ key: 'bare', server: bare, request: scenario.bare }] : []),
          ...(scenario.feathers && feathers
            ? [{ key: 'feathers', server: feathers, request: scenario.feathers }]
            : [])
        ]
        // Warm-up of each server (JIT, statement caches), then the rounds.
        for (const side of sides) await load(side.server, side.request, 2)
        const measured: Array<{
          mine: Result
          base: Result
          floor?: Result
          bare?: Result
          feathers?: Result
          ratio: number
          cpuRatio: number
        }> = []
        for (let round = 0; round < rounds; round++) {
          // Each round starts with the next server, so that none is always measured first or last.
          const results: Record<string, Result> = {}
          for (let turn = 0; turn < sides.length; turn++) {
            const side = sides[(round + turn) % sides.length]
            results[side.key] = await load(side.server, side.request)
          }
          const { mine, base } = results
          measured.push({
            mine,
            base,
            floor: results.floor,
            bare: results.bare,
            feathers: results.feathers,
            ratio: mine.rps / base.rps,
            cpuRatio: base.cpu / mine.cpu
          })
        }
        const floorRounds = measured.flatMap(({ mine, base, floor }) =>
          floor ? [{ mine, base, floor }] : []
        )
        if (floorRounds.length) {
          const cpu = (side: 'mine' | 'floor' | 'base') =>
            median(floorRounds.map((round) => round[side].cpu)).toFixed(0)
          floorRows.push([
            name,
            scenario.name,
            medianAndRange(floorRounds.map(({ mine, floor }) => mine.rps / floor.rps)),
            medianAndRange(floorRounds.map(({ mine, floor }) => floor.cpu / mine.cpu)),
            medianAndRange(floorRounds.map(({ floor, base }) => floor.rps / base.rps)),
            medianAndRange(floorRounds.map(({ floor, base }) => base.cpu / floor.cpu)),
            `${cpu('mine')} / ${cpu('floor')} / ${cpu('base')}`,
            String(floorRounds.reduce((sum, round) => sum + round.floor.errors, 0))
          ])
        }
        for (const other of ['bare', 'feathers'] as const) {
          const pairs = measured.flatMap((round) =>
            round[other] ? [{ mine: round.mine, them: round[other] }] : []
          )
          if (!pairs.length) continue
          const rps = (side: 'mine' | 'them') => median(pairs.map((pair) => pair[side].rps)).toFixed(0)
          const cpu = (side: 'mine' | 'them') => median(pairs.map((pair) => pair[side].cpu)).toFixed(0)
          baselineRows.push([
            name,
            scenario.name,
            other,
            `${rps('mine')} / ${rps('them')}`,
            medianAndRange(pairs.map(({ mine, them }) => mine.rps / them.rps)),
            `${cpu('mine')} / ${cpu('them')}`,
            medianAndRange(pairs.map(({ mine, them }) => mine.cpu / them.cpu)),
            String(pairs.reduce((sum, pair) => sum + pair.them.errors, 0))
          ])
        }
        measured.sort((a, b) => a.ratio - b.ratio)
        // The lower middle round when the count is even: a median that flatters nobody.
        const { mine, base, ratio } = measured[Math.floor((measured.length - 1) / 2)]
        const spread = `${measured[0].ratio.toFixed(2)}–${measured[measured.length - 1].ratio.toFixed(2)}`
        const errors = measured.reduce((sum, round) => sum + round.mine.errors + round.base.errors, 0)
        const statements = await statementsPerRequest(port, scenario.server)
        rows.push([
          name,
          scenario.name,
          ratio.toFixed(2),
          spread,
          `≥ ${scenario.goal}`,
          mine.rps.toFixed(0),
          base.rps.toFixed(0),
          `${mine.p50} / ${mine.p99}`,
          `${base.p50} / ${base.p99}`,
          `${mine.cpu.toFixed(0)} / ${base.cpu.toFixed(0)}`,
          medianAndRange(measured.map((round) => round.cpuRatio)),
          statements.toFixed(1),
          String(errors)
        ])
      }
      for (const sampler of samplers) sampler.stop()
      const [peak, baselinePeak] = samplers.map((sampler) => sampler.peak())
      // What of the peak was live: RSS and V8's used heap after a full collection, for both servers.
      const collected = await Promise.all(
        [port, baselinePort].map(
          async (at) => (await (await fetch(`http://127.0.0.1:${at}/__gc`)).json()) as NodeJS.MemoryUsage
        )
      )
      memory.push([
        name,
        formatMb(peak),
        formatMb(baselinePeak),
        (peak / baselinePeak).toFixed(2),
        `${formatMb(idle[0])} / ${formatMb(idle[1])}`,
        collected.map((usage) => `${formatMb(usage.rss)} (heap ${formatMb(usage.heapUsed)})`).join(' / ')
      ])
    } finally {
      stop()
      await database.drop()
    }
  }
  const header = [
    'db',
    'scenario',
    'ratio',
    'range',
    'goal',
    'req/s',
    'baseline req/s',
    'p50/p99 ms',
    'baseline p50/p99',
    'CPU µs/req (ours / baseline)',
    'baseline CPU / ours (range)',
    'SQL/req',
    'errors'
  ]
  printTable([header, ...rows])
  const floorHeader = [
    'db',
    'GraphQL scenario',
    'ours / floor req/s (range)',
    'floor CPU / ours',
    'floor / raw req/s (range)',
    'raw CPU / floor',
    'CPU µs/req (ours / floor / raw)',
    'floor errors'
  ]
  if (floorRows.length) printTable([floorHeader, ...floorRows])
  const baselinesHeader = [
    'db',
    'scenario',
    'baseline',
    'req/s (ours / it)',
    'ours / it req/s (range)',
    'CPU µs/req (ours / it)',
    'ours / it CPU (range)',
    'its errors'
  ]
  if (baselineRows.length) printTable([baselinesHeader, ...baselineRows])
  const memoryHeader = [
    'db',
    'peak RSS under load',
    'baseline peak RSS',
    'ratio (goal ≤ 1.5)',
    'idle RSS (ours / baseline)'
  ]
  printTable([[...memoryHeader, 'RSS after full GC, live heap (ours / baseline)'], ...memory])
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
