import assert from 'node:assert/strict'
import autocannon from 'autocannon'
import { benchDatabase, seedSubTasks, seedTodoItems } from '../bench/support/databases'
import { databaseNames } from './support/databases'
import { serverProcess } from './support/server-process'

const CONNECTIONS = 200
const SECONDS = Number(process.env.LOAD_SECONDS ?? 30)

/** GraphQL answers its failures (SERVICE_UNAVAILABLE from an exhausted pool, say) with a 200 and `errors`. */
let graphqlErrors: string[] = []

const requests: autocannon.Request[] = [
  { method: 'GET', path: '/todo-items?completed=true&limit=25' },
  { method: 'GET', path: '/todo-items/42' },
  {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query:
        '{ todoItems(paging: {first: 25}) { edges { node { id title subTasks { edges { node { id title } } } } } } }'
    }),
    onResponse(status, body) {
      if (status !== 200) return
      let errors: Array<{ extensions?: { code?: string } }> | undefined
      try {
        errors = JSON.parse(body).errors
      } catch {
        graphqlErrors.push(`unparsable body: ${body.slice(0, 80)}`)
        return
      }
      if (errors) graphqlErrors.push(...errors.map((error) => error.extensions?.code ?? 'no code'))
    }
  }
]

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The example server in a process of its own under 200 concurrent connections: no request may fail, its
 * throughput at the end must stay within 70% of its start and its p99 near the warm-up's, and its memory
 * after the run within 20% of its memory after a warm-up.
 */
for (const name of databaseNames) {
  describe(`Load: ${CONNECTIONS} connections for ${SECONDS} s [${name}]`, function () {
    const server = serverProcess(async () => {
      const database = await benchDatabase(name)
      await seedTodoItems(database.db, 2000)
      await seedSubTasks(database.db, 10)
      return database
    })

    it('answers every request of list, get and GraphQL, and does not grow', async function () {
      this.timeout((SECONDS + 60) * 1000)
      // A request still unanswered after 30 s counts as failed (autocannon's own default is 10 s; on a shared
      // two-core machine the GraphQL tail under 200 connections reaches a few seconds).
      // Responses counted per second of the run, so that a server slowing as the run goes on shows.
      const run = async (duration: number) => {
        const perSecond: number[] = []
        const started = Date.now()
        const result = await new Promise<autocannon.Result>((resolve, reject) => {
          const instance = autocannon(
            {
              url: `http://127.0.0.1:${server.port}`,
              connections: CONNECTIONS,
              duration,
              requests,
              timeout: 30
            },
            (error, done) => (error ? reject(error) : resolve(done))
          )
          instance.on('response', () => {
            const second = Math.floor((Date.now() - started) / 1000)
            perSecond[second] = (perSecond[second] ?? 0) + 1
          })
        })
        return Object.assign(result, { perSecond })
      }
      // Live memory: the JS heap after a full collection (a leak shows there); RSS also counts allocator pages
      // the process keeps after a burst, so it is reported, not judged.
      const settled = async () => {
        await wait(500)
        return server.memory()
      }
      const warmUp = await run(5)
      const warm = await settled()
      graphqlErrors = []
      const result = await run(SECONDS)
      const after = await settled()
      const failures = result.errors + result.timeouts + result.non2xx + graphqlErrors.length
      const codes: Record<string, number> = {}
      for (const code of graphqlErrors) codes[code] = (codes[code] ?? 0) + 1
      assert.equal(
        failures,
        0,
        `${failures} of ${result.requests.total} requests failed: ${result.errors} errors, ${result.timeouts} timeouts, ` +
          `statuses ${JSON.stringify(result.statusCodeStats)}, GraphQL errors ${JSON.stringify(codes)}`
      )
      // Throughput measured against the warm-up's on the same machine at the same time (an absolute figure
      // fails on a loaded machine): a server that slows down as the run goes on falls behind it.
      assert.ok(
        result.requests.average >= warmUp.requests.average / 2,
        `${result.requests.average} requests/s, against ${warmUp.requests.average} in the warm-up`
      )
      // The last five whole seconds against the first five (the first, ramping up, left out): a server that
      // slows down under load falls behind its own start, whatever the machine's speed.
      const seconds = result.perSecond.slice(1, SECONDS)
      const mean = (counts: number[]) => counts.reduce((sum, count) => sum + (count ?? 0), 0) / counts.length
      const first = mean(seconds.slice(0, 5))
      const last = mean(seconds.slice(-5))
      assert.ok(last >= first * 0.7, `the last 5 s answered ${last} req/s, the first 5 s ${first}`)
      // And its slowest answers stay near the warm-up's.
      assert.ok(
        result.latency.p99 <= Math.max(2 * warmUp.latency.p99, warmUp.latency.p99 + 100),
        `p99 ${result.latency.p99} ms, against ${warmUp.latency.p99} ms in the warm-up`
      )
      const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
      assert.ok(
        after.heap <= warm.heap * 1.2,
        `live memory grew from ${mb(warm.heap)} MB to ${mb(after.heap)} MB`
      )
      console.log(
        `      ${result.requests.total} requests, ${result.requests.average} req/s (first 5 s ${first}, last ${last}), ` +
          `p99 ${result.latency.p99} ms (warm-up ${warmUp.latency.p99}), ` +
          `heap ${mb(warm.heap)} → ${mb(after.heap)} MB, RSS ${mb(warm.rss)} → ${mb(after.rss)} MB`
      )
    })
  })
}
