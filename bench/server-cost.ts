import autocannon from 'autocannon'
import { benchDatabase, benchDatabaseNames } from './support/databases'
import { availableParallelism } from 'node:os'
import { formatMb, pinToCore, rssOf, sampleRss } from './support/processes'
import { startBenchServers, type BenchServer } from './support/bench-servers'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag, loadFlags } from './support/flags'
import { printTable } from './support/table'

assertCompiledPlugin()

/**
 * What a request costs the server (issue 46): the example server, the bare handler (the floor of any Node
 * server, `support/bare-server.ts`) and the app the same libraries make without the plugin (`Framework`),
 * each sent the same fixed number of requests per round, in turns, each round starting with the next server.
 * CPU per request is each server's own `process.cpuUsage()` (`GET /__cpu`) over its round: on a machine whose
 * cores autocannon, the database and other work share, it moves by a few percent where requests per second
 * move by tens. Every server runs a full collection before each scenario. Peak RSS is sampled while each
 * server is loaded.
 * With `--count-reuse off` the example server reads every list's count (see `COUNT_REUSE` in
 * `support/example-server.ts`), as the bare handler does: the same work on both sides.
 * With `--pin`, every server runs on the last core and autocannon on the first, so that no server's time is
 * shared with the load's. With `--before <checkout>`, that checkout's example server (built there with
 * `npm run build`) takes its turns too: a change's before and after, measured in one run against one floor.
 *
 *   npm run bench:cost -- --items 10000 --requests 20000 --rounds 5 --connections 10 [--only 'REST get']
 *     [--pin] [--before ../feathers-query-main]
 */
const { items, rounds, connections } = loadFlags({ seconds: 0, rounds: 5 })
const requests = flag('requests', 20_000)
const argument = (name: string) =>
  process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined
const only = argument('only') ?? ''
const countReuse = argument('count-reuse') !== 'off'
const pin = process.argv.includes('--pin')
const beforeCheckout = argument('before')

type Request = autocannon.Request & { path: string }

/**
 * The app the same libraries make without the plugin: on REST the one a Feathers user would write
 * (`feathers-server.ts`), on GraphQL the GraphQL floor (`graphql-floor-server.ts`: Koa, koa-body, graphql-http
 * and graphql-js over the bare reads).
 */
type Framework = 'feathers' | 'graphqlFloor'

interface Scenario {
  name: string
  ours: Request
  bare: Request
  framework: { server: Framework; request: Request }
}

const graphql = (query: string): Request => ({
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query })
})

const graphqlGet = (query: string): Request => ({
  method: 'GET',
  path: `/graphql?query=${encodeURIComponent(query)}`
})

const LIST =
  '{ todoItems(paging: {first: 25}, filter: {completed: {is: false}}) ' +
  '{ edges { node { id title completed created priority } } } }'

const scenarios: Scenario[] = [
  {
    name: 'REST get by id',
    ours: { method: 'GET', path: '/todo-items/4242' },
    bare: { method: 'GET', path: '/todo-items/4242' },
    framework: { server: 'feathers', request: { method: 'GET', path: '/todo-items/4242' } }
  },
  {
    name: 'REST list, 25, one filter, totalCount',
    ours: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    bare: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    framework: {
      server: 'feathers',
      request: { method: 'GET', path: '/todo-items?completed=true&$limit=25&$sort[id]=1' }
    }
  },
  {
    name: 'GraphQL todoItem(id: 42)',
    ours: graphql('{ todoItem(id: 42) { id title } }'),
    bare: { method: 'GET', path: '/graphql-one' },
    framework: { server: 'graphqlFloor', request: graphql('{ todoItem(id: 42) { id title } }') }
  },
  {
    // The same request as the bare handler's, a GET with no body: GraphQL over HTTP's GET, cacheable.
    name: 'GraphQL todoItem(id: 42) over GET',
    ours: graphqlGet('{ todoItem(id: 42) { id title } }'),
    bare: { method: 'GET', path: '/graphql-one' },
    framework: { server: 'graphqlFloor', request: graphqlGet('{ todoItem(id: 42) { id title } }') }
  },
  {
    name: 'GraphQL list, 25, 5 fields',
    ours: graphql(LIST),
    bare: { method: 'GET', path: '/graphql-list' },
    framework: { server: 'graphqlFloor', request: graphql(LIST) }
  }
]

interface Round {
  rps: number
  /** CPU µs per request. */
  cpu: number
  errors: number
  peakRss: number
}

async function cpuOf(server: BenchServer) {
  const usage = (await (await fetch(`http://127.0.0.1:${server.port}/__cpu`)).json()) as NodeJS.CpuUsage
  return usage.user + usage.system
}

async function collect(server: BenchServer) {
  await (await fetch(`http://127.0.0.1:${server.port}/__gc`)).arrayBuffer()
}

async function load(server: BenchServer, request: Request, amount: number): Promise<Round> {
  const rss = sampleRss(server.pid, 50)
  const before = await cpuOf(server)
  const started = performance.now()
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    amount,
    // autocannon stops at its next sample once `amount` is reached: at its default second, a round of a few
    // thousand requests would be timed in whole seconds.
    sampleInt: 10,
    requests: [request]
  })
  // The probe request itself costs a few tens of µs: nothing against thousands of requests.
  const seconds = (performance.now() - started) / 1000
  const cpu = (await cpuOf(server)) - before
  rss.stop()
  return {
    // autocannon's average is of whole seconds' counts: too coarse for rounds of a few seconds.
    rps: result.requests.total / seconds,
    cpu: cpu / Math.max(1, result.requests.total),
    errors: result.errors + result.non2xx + result.timeouts,
    peakRss: rss.peak()
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]
const range = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`

// Read before this process pins itself, which makes it see one core.
const lastCore = availableParallelism() - 1

/** Servers on the last core, this process (autocannon) on the first. */
function pinAll(servers: BenchServer[]) {
  const last = lastCore
  if (last < 1) throw new Error('--pin needs two cores at least')
  for (const server of servers) pinToCore(server.pid, last)
  pinToCore(process.pid, 0)
}

async function main() {
  console.log(
    `Server cost: ${items.toLocaleString()} todo items × 10 sub tasks, ${connections} connections, ` +
      `${rounds} rounds of ${requests.toLocaleString()} requests per server, count reuse ${countReuse ? 'on' : 'off'}`
  )
  const rows: string[][] = []
  const memory: string[][] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    let stop = () => {}
    try {
      const servers = await startBenchServers(database, items, {
        bare: true,
        feathers: true,
        graphqlFloor: true,
        exampleEnv: countReuse ? {} : { COUNT_REUSE: 'off' },
        before: beforeCheckout
      })
      stop = servers.stop
      if (pin)
        pinAll([
          servers.server,
          servers.bare!,
          servers.feathers!,
          servers.graphqlFloor!,
          ...(servers.before ? [servers.before] : [])
        ])
      const peaks: Record<string, number> = { ours: 0, bare: 0, feathers: 0, graphqlFloor: 0, before: 0 }
      for (const scenario of scenarios.filter((each) => each.name.includes(only))) {
        // `peak` names the server whose peak RSS a side's rounds count to.
        const sides: Array<{ key: string; peak: string; server: BenchServer; request: Request }> = [
          { key: 'ours', peak: 'ours', server: servers.server, request: scenario.ours },
          ...(servers.before
            ? [{ key: 'before', peak: 'before', server: servers.before, request: scenario.ours }]
            : []),
          { key: 'bare', peak: 'bare', server: servers.bare!, request: scenario.bare },
          {
            key: 'framework',
            peak: scenario.framework.server,
            server: servers[scenario.framework.server]!,
            request: scenario.framework.request
          }
        ]
        // Each scenario starts from a collected heap on every server: none carries an earlier scenario's
        // garbage into it.
        for (const side of sides) await collect(side.server)
        for (const side of sides) await load(side.server, side.request, Math.ceil(requests / 4))
        const measured: Array<Record<string, Round>> = []
        for (let round = 0; round < rounds; round++) {
          const results: Record<string, Round> = {}
          for (let turn = 0; turn < sides.length; turn++) {
            const side = sides[(round + turn) % sides.length]
            results[side.key] = await load(side.server, side.request, requests)
            peaks[side.peak] = Math.max(peaks[side.peak], results[side.key].peakRss)
          }
          measured.push(results)
        }
        const of = (key: string, value: (round: Round) => number) =>
          median(measured.map((round) => value(round[key])))
        const ratios = (key: string, value: (round: Round) => number) =>
          measured.map((round) => value(round.ours) / value(round[key]))
        const ratio = (key: string, value: (round: Round) => number) =>
          `${median(ratios(key, value)).toFixed(2)} (${range(ratios(key, value))})`
        const figures = (value: (round: Round) => number) =>
          ['ours', 'bare', 'framework'].map((key) => of(key, value).toFixed(0)).join(' / ')
        rows.push([
          name,
          `${scenario.name} (${scenario.framework.server === 'feathers' ? 'Feathers app' : 'GraphQL floor'})`,
          figures((r) => r.cpu),
          ratio('bare', (r) => r.cpu),
          ratio('framework', (r) => r.cpu),
          figures((r) => r.rps),
          ratio('framework', (r) => r.rps),
          String(
            measured.reduce((sum, round) => sum + Object.values(round).reduce((s, r) => s + r.errors, 0), 0)
          ),
          ...(servers.before
            ? [
                `${of('before', (r) => r.cpu).toFixed(0)}; ` +
                  `${median(measured.map((round) => round.before.cpu / round.bare.cpu)).toFixed(2)}`
              ]
            : [])
        ])
      }
      memory.push([
        name,
        [peaks.ours, peaks.bare, peaks.feathers, peaks.graphqlFloor].map(formatMb).join(' / '),
        (peaks.ours / peaks.bare).toFixed(2),
        `${formatMb(rssOf(servers.server.pid))} / ${formatMb(rssOf(servers.bare!.pid))}`,
        ...(servers.before ? [`${formatMb(peaks.before)}; ${(peaks.before / peaks.bare).toFixed(2)}`] : [])
      ])
    } finally {
      stop()
      await database.drop()
    }
  }
  printTable([
    [
      'db',
      'scenario',
      'CPU µs/req (ours / bare / framework)',
      'ours / bare CPU (range)',
      'ours / framework CPU (range)',
      'req/s (ours / bare / framework)',
      'ours / framework req/s (range)',
      'errors',
      ...(beforeCheckout ? ['before: CPU µs/req; / bare'] : [])
    ],
    ...rows
  ])
  printTable([
    [
      'db',
      'peak RSS under load (ours / bare / Feathers app / GraphQL floor)',
      'ours / bare',
      'RSS at the end (ours / bare)',
      ...(beforeCheckout ? ['before: peak RSS; / bare'] : [])
    ],
    ...memory
  ])
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
