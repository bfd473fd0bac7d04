import autocannon from 'autocannon'
import { benchDatabase, benchDatabaseNames } from './support/databases'
import { formatMb, rssOf, sampleRss } from './support/processes'
import { startBenchServers, type BenchServer } from './support/bench-servers'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag, loadFlags } from './support/flags'
import { printTable } from './support/table'

assertCompiledPlugin()

/**
 * What a request costs the server (issue 46): the example server, the bare handler (the floor of any Node
 * server, `support/bare-server.ts`) and, on REST, the app a Feathers user would write (`feathers-server.ts`),
 * each sent the same fixed number of requests per round, in turns, each round starting with the next server.
 * CPU per request is each server's own `process.cpuUsage()` (`GET /__cpu`) over its round: on a machine whose
 * cores autocannon, the database and other work share, it moves by a few percent where requests per second
 * move by tens. Peak RSS is sampled while each server is loaded.
 * With `--count-reuse off` the example server reads every list's count (see `COUNT_REUSE` in
 * `support/example-server.ts`), as the bare handler does: the same work on both sides.
 *
 *   npm run bench:cost -- --items 10000 --requests 20000 --rounds 5 --connections 10 [--only 'REST get']
 */
const { items, rounds, connections } = loadFlags({ seconds: 0, rounds: 5 })
const requests = flag('requests', 20_000)
const argument = (name: string) =>
  process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : undefined
const only = argument('only') ?? ''
const countReuse = argument('count-reuse') !== 'off'

type Request = autocannon.Request & { path: string }

interface Scenario {
  name: string
  ours: Request
  bare: Request
  feathers?: Request
}

const graphql = (query: string): Request => ({
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query })
})

const scenarios: Scenario[] = [
  {
    name: 'REST get by id',
    ours: { method: 'GET', path: '/todo-items/4242' },
    bare: { method: 'GET', path: '/todo-items/4242' },
    feathers: { method: 'GET', path: '/todo-items/4242' }
  },
  {
    name: 'REST list, 25, one filter, totalCount',
    ours: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    bare: { method: 'GET', path: '/todo-items?completed=true&limit=25' },
    feathers: { method: 'GET', path: '/todo-items?completed=true&$limit=25&$sort[id]=1' }
  },
  {
    name: 'GraphQL todoItem(id: 42)',
    ours: graphql('{ todoItem(id: 42) { id title } }'),
    bare: { method: 'GET', path: '/graphql-one' }
  },
  {
    // The same request as the bare handler's, a GET with no body: GraphQL over HTTP's GET, cacheable.
    name: 'GraphQL todoItem(id: 42) over GET',
    ours: {
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent('{ todoItem(id: 42) { id title } }')}`
    },
    bare: { method: 'GET', path: '/graphql-one' }
  },
  {
    name: 'GraphQL list, 25, 5 fields',
    ours: graphql(
      '{ todoItems(paging: {first: 25}, filter: {completed: {is: false}}) ' +
        '{ edges { node { id title completed created priority } } } }'
    ),
    bare: { method: 'GET', path: '/graphql-list' }
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

async function load(server: BenchServer, request: Request, amount: number): Promise<Round> {
  const rss = sampleRss(server.pid, 50)
  const before = await cpuOf(server)
  const started = performance.now()
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    amount,
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
        exampleEnv: countReuse ? {} : { COUNT_REUSE: 'off' }
      })
      stop = servers.stop
      const peaks: Record<string, number> = { ours: 0, bare: 0, feathers: 0 }
      for (const scenario of scenarios.filter((each) => each.name.includes(only))) {
        const sides = [
          { key: 'ours', server: servers.server, request: scenario.ours },
          { key: 'bare', server: servers.bare!, request: scenario.bare },
          ...(scenario.feathers
            ? [{ key: 'feathers', server: servers.feathers!, request: scenario.feathers }]
            : [])
        ]
        for (const side of sides) await load(side.server, side.request, Math.ceil(requests / 4))
        const measured: Array<Record<string, Round>> = []
        for (let round = 0; round < rounds; round++) {
          const results: Record<string, Round> = {}
          for (let turn = 0; turn < sides.length; turn++) {
            const side = sides[(round + turn) % sides.length]
            results[side.key] = await load(side.server, side.request, requests)
            peaks[side.key] = Math.max(peaks[side.key], results[side.key].peakRss)
          }
          measured.push(results)
        }
        const of = (key: string, value: (round: Round) => number) =>
          median(measured.map((round) => value(round[key])))
        const ratios = (key: string, value: (round: Round) => number) =>
          measured.map((round) => value(round.ours) / value(round[key]))
        const feathers = scenario.feathers !== undefined
        rows.push([
          name,
          scenario.name,
          [
            of('ours', (r) => r.cpu),
            of('bare', (r) => r.cpu),
            ...(feathers ? [of('feathers', (r) => r.cpu)] : [])
          ]
            .map((value) => value.toFixed(0))
            .join(' / '),
          `${median(ratios('bare', (r) => r.cpu)).toFixed(2)} (${range(ratios('bare', (r) => r.cpu))})`,
          [
            of('ours', (r) => r.rps),
            of('bare', (r) => r.rps),
            ...(feathers ? [of('feathers', (r) => r.rps)] : [])
          ]
            .map((value) => value.toFixed(0))
            .join(' / '),
          feathers
            ? `${median(ratios('feathers', (r) => r.rps)).toFixed(2)} (${range(ratios('feathers', (r) => r.rps))})`
            : '',
          String(
            measured.reduce((sum, round) => sum + Object.values(round).reduce((s, r) => s + r.errors, 0), 0)
          )
        ])
      }
      memory.push([
        name,
        `${formatMb(peaks.ours)} / ${formatMb(peaks.bare)} / ${formatMb(peaks.feathers)}`,
        (peaks.ours / peaks.bare).toFixed(2),
        `${formatMb(rssOf(servers.server.pid))} / ${formatMb(rssOf(servers.bare!.pid))}`
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
      'CPU µs/req (ours / bare / feathers)',
      'ours / bare CPU (range)',
      'req/s (ours / bare / feathers)',
      'ours / feathers req/s (range)',
      'errors'
    ],
    ...rows
  ])
  printTable([
    ['db', 'peak RSS under load (ours / bare / feathers)', 'ours / bare', 'RSS at the end (ours / bare)'],
    ...memory
  ])
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
