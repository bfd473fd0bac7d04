import { createClient, type Client } from 'graphql-ws'
import WebSocket from 'ws'
import { benchDatabase, benchDatabaseNames, seedTodoItems, type BenchDatabaseName } from './support/databases'
import { cpuMicrosOf, startScript } from './support/processes'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { flag } from './support/flags'
import { printTable } from './support/table'
import { countOf, question } from './live-queries-questions'

assertCompiledPlugin()

/**
 * Live queries against re-running every subscriber's query: `--subscribers` live subscriptions (default 1,000)
 * over `--questions` distinct questions (default 50: lists and aggregates, each changed by every write) on the
 * example server, under `--writes` creates per second (default 20) for `--seconds` (default 5). Then the same
 * writes with the subscribers' queries run again after each one, as a server without shared live results
 * would (over the same WebSocket connections, so no HTTP is counted), for `--rerun-writes` writes (default 20)
 * one after the other. Prints the server's CPU time per write
 * of each, their ratio, and the delay from a write's answer to each subscriber's result holding it (p50, p99).
 *
 *   npm run bench:live -- --items 10000 --subscribers 1000 --questions 50 --writes 20 --seconds 5
 */
const items = flag('items', 10_000)
const subscriberCount = flag('subscribers', 1000)
const questionCount = flag('questions', 50)
const writesPerSecond = flag('writes', 20)
const seconds = flag('seconds', 5)
const rerunWrites = flag('rerun-writes', 20)

/**
 * Live subscriptions per connection: half the server's default `maxSubscriptions` (10), so that the re-run
 * phase's queries fit beside them.
 */
const PER_CONNECTION = 5
/** Connections per source address: the server's default `maxConnectionsPerUser` for anonymous callers. */
const PER_ADDRESS = 10

/** A WebSocket from one of the loopback addresses, so that each address holds at most PER_ADDRESS. */
function socketFrom(address: string) {
  return class extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { localAddress: address })
    }
  }
}

interface Subscriber {
  client: Client
  query: string
  /** When each count was first delivered. */
  seen: Map<number, number>
  first: number
}

/** At most `size` tasks at once; the others wait in order. */
class Slots {
  private free: number
  private readonly waiting: Array<() => void> = []
  constructor(size: number) {
    this.free = size
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.free++
    }
  }
}

function percentile(sorted: number[], p: number) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function post(port: number, index: number) {
  const response = await fetch(`http://127.0.0.1:${port}/todo-items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: `live write ${index}`, priority: 0 })
  })
  if (response.status !== 201) throw new Error(`write ${index}: ${response.status}`)
  return performance.now()
}

/** Writes at a steady rate; answers when each write was answered. */
async function steadyWrites(port: number) {
  const count = Math.round(writesPerSecond * seconds)
  const answered: number[] = []
  const pending: Promise<unknown>[] = []
  const start = performance.now()
  for (let index = 0; index < count; index++) {
    const due = start + (index * 1000) / writesPerSecond
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(post(port, index).then((at) => (answered[index] = at)))
  }
  await Promise.all(pending)
  return answered
}

async function measure(name: BenchDatabaseName) {
  const database = await benchDatabase(name)
  const server = startScript('support/example-server.ts', { DATABASE_URL: database.url })
  try {
    await seedTodoItems(database.db, items)
    const port = Number((await server.ready).payload)
    const url = `ws://127.0.0.1:${port}/graphql`
    const clients: Client[] = []
    const subscribers: Subscriber[] = []
    for (let index = 0; index < subscriberCount; index++) {
      const connection = Math.floor(index / PER_CONNECTION)
      if (!clients[connection]) {
        const address = `127.0.0.${2 + Math.floor(connection / PER_ADDRESS)}`
        clients[connection] = createClient({ url, webSocketImpl: socketFrom(address), retryAttempts: 0 })
      }
      const subscriber: Subscriber = {
        client: clients[connection],
        query: question(index % questionCount),
        seen: new Map(),
        first: -1
      }
      subscribers.push(subscriber)
      subscriber.client.subscribe(
        { query: subscriber.query },
        {
          next: (result) => {
            if (result.errors) throw new Error(JSON.stringify(result.errors))
            const count = countOf(result.data)
            if (subscriber.first < 0) subscriber.first = count
            if (!subscriber.seen.has(count)) subscriber.seen.set(count, performance.now())
          },
          error: (error) => console.error('subscription failed', error),
          complete: () => {}
        }
      )
    }
    while (subscribers.some((subscriber) => subscriber.first < 0)) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }

    console.log(`  ${name}: ${subscriberCount} subscribed; live phase`)
    // Live: the writes alone; the server pushes what changed.
    const liveCpu = cpuMicrosOf(server.child.pid!)
    const answered = await steadyWrites(port)
    const writes = answered.length
    const settle = performance.now() + 5000
    while (
      subscribers.some((subscriber) => !subscriber.seen.has(subscriber.first + writes)) &&
      performance.now() < settle
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const liveMicros = cpuMicrosOf(server.child.pid!) - liveCpu
    const delays: number[] = []
    let missing = 0
    for (const subscriber of subscribers) {
      for (let index = 0; index < writes; index++) {
        // The first result that holds write `index` (and every write before it).
        let at: number | undefined
        for (const [count, when] of subscriber.seen) {
          if (count >= subscriber.first + index + 1 && (at === undefined || when < at)) at = when
        }
        if (at === undefined) missing++
        else delays.push(Math.max(0, at - answered[index]))
      }
    }
    delays.sort((a, b) => a - b)

    console.log(`  ${name}: re-run phase`)
    // Re-run: after each write, every subscriber's query once, as a query over its connection.
    const rerunCpu = cpuMicrosOf(server.child.pid!)
    const rerunDelays: number[] = []
    // Each connection runs at most PER_CONNECTION queries at once beside its subscriptions; the rest wait.
    // The writes go one after the other, each once every query of the one before was answered: a server
    // re-running every query cannot keep up with the live phase's rate, and a backlog would measure nothing.
    const slots = new Map(clients.map((client) => [client, new Slots(PER_CONNECTION)]))
    for (let index = 0; index < rerunWrites; index++) {
      const start = await post(port, writes + index)
      await Promise.all(
        subscribers.map((subscriber) =>
          slots.get(subscriber.client)!.run(
            () =>
              new Promise<void>((resolve, reject) =>
                subscriber.client.subscribe(
                  { query: subscriber.query.replace(/^subscription/, 'query') },
                  {
                    next: () => {},
                    error: (error) => reject(new Error(`re-run failed: ${JSON.stringify(error)}`)),
                    complete: resolve
                  }
                )
              )
          )
        )
      )
      rerunDelays.push(performance.now() - start)
    }
    const rerunMicros = cpuMicrosOf(server.child.pid!) - rerunCpu
    rerunDelays.sort((a, b) => a - b)
    await Promise.all(clients.map((client) => client.dispose()))
    return {
      name,
      writes,
      live: { cpu: liveMicros / writes, p50: percentile(delays, 50), p99: percentile(delays, 99), missing },
      rerun: {
        writes: rerunWrites,
        cpu: rerunMicros / rerunWrites,
        p50: percentile(rerunDelays, 50),
        p99: percentile(rerunDelays, 99)
      }
    }
  } finally {
    server.child.kill()
    await database.drop()
  }
}

async function main() {
  console.log(
    `Live queries: ${subscriberCount} subscribers over ${questionCount} questions, ${writesPerSecond} writes/s ` +
      `for ${seconds} s, ${items} todo items`
  )
  const rows = [
    [
      'database',
      'writes (live, re-run)',
      'live CPU/write',
      're-run CPU/write',
      're-run / live',
      'live p50',
      'live p99',
      're-run p50',
      're-run p99',
      'missed'
    ]
  ]
  for (const name of benchDatabaseNames()) {
    const result = await measure(name)
    const ms = (value: number) => `${value.toFixed(1)} ms`
    rows.push([
      name,
      `${result.writes}, ${result.rerun.writes}`,
      `${(result.live.cpu / 1000).toFixed(1)} ms`,
      `${(result.rerun.cpu / 1000).toFixed(1)} ms`,
      `${(result.rerun.cpu / result.live.cpu).toFixed(1)}×`,
      ms(result.live.p50),
      ms(result.live.p99),
      ms(result.rerun.p50),
      ms(result.rerun.p99),
      String(result.live.missing)
    ])
  }
  printTable(rows)
  console.log(
    '\nCPU/write: the server process CPU time over the phase divided by its writes. Live delays: from a ' +
      "write's answer to each subscriber's first result holding it. Re-run delays: from a write's answer to " +
      'the last of the subscribers’ queries answered, one write at a time.'
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
