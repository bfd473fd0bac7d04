import type { Knex } from 'knex'
import type { Server } from 'node:http'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { createApp } from '../example/app'
import type { AggregateRequest, ResourceService } from 'feathers-query'
import { benchDatabase, benchDatabaseNames, seedTodoItems, type BenchDatabaseName } from './support/databases'
import { assertCompiledPlugin } from './support/compiled-plugin'

assertCompiledPlugin()

/**
 * Aggregate benchmark: N todo items aggregated through the service API (hooks, validation, SQL compilation,
 * decoding) and through `todoItemAggregate` over HTTP (POST /graphql to the example app listening in this
 * process: HTTP, GraphQL parsing, validation and serialization on top), against the same GROUP BY statement
 * written by hand and run through knex in the same process. Prints the median of several runs and the ratio
 * to that baseline.
 *
 *   npm run bench:aggregate -- --rows 1000000 --runs 5  (MariaDB with MYSQL_URL, PostgreSQL with PG_URL)
 */
const { values } = parseArgs({ options: { rows: { type: 'string' }, runs: { type: 'string' } } })
const rows = Number(values.rows ?? 1_000_000)
const runs = Number(values.runs ?? 5)

type DatabaseName = BenchDatabaseName

interface Scenario {
  name: string
  request: AggregateRequest & { partitionBy?: undefined }
  /** The same request as a GraphQL query. */
  graphql: string
  /** The statement the service should produce, written by hand per database. */
  sql: Record<DatabaseName, string>
}

const byCompleted =
  'SELECT completed, COUNT(id), AVG(priority) FROM todo_items GROUP BY completed ORDER BY completed'

const scenarios: Scenario[] = [
  {
    name: 'groupBy completed',
    request: { groupBy: [{ field: 'completed' }], count: ['id'], avg: ['priority'] },
    graphql: '{ todoItemAggregate { groupBy { completed } count { id } avg { priority } } }',
    sql: { sqlite: byCompleted, mysql: byCompleted, postgres: byCompleted }
  },
  {
    name: 'groupBy created DAY',
    request: { groupBy: [{ field: 'created', by: 'DAY' }], count: ['id'], max: ['priority'] },
    graphql: '{ todoItemAggregate { groupBy { created(by: DAY) } count { id } max { priority } } }',
    sql: {
      sqlite:
        "SELECT strftime('%Y-%m-%d', created / 1000.0, 'unixepoch') AS day, COUNT(id), MAX(priority) " +
        'FROM todo_items GROUP BY day ORDER BY day',
      mysql:
        "SELECT DATE_FORMAT(created, '%Y-%m-%d') AS day, COUNT(id), MAX(priority) " +
        'FROM todo_items GROUP BY day ORDER BY day',
      postgres:
        "SELECT to_char(created AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, COUNT(id), MAX(priority) " +
        'FROM todo_items GROUP BY day ORDER BY day'
    }
  }
]

interface Variant {
  label: string
  /** Runs the scenario once and returns the number of groups, so that every variant is checked to agree. */
  runOnce: () => Promise<number>
}

interface Target {
  database: DatabaseName
  db: Knex
  service: ResourceService
  /** Where the example app listens. */
  baseUrl: string
}

/** Posts a query to /graphql and returns the length of its `todoItemAggregate` list. */
async function postGraphql(baseUrl: string, query: string) {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query })
  })
  const body = (await response.json()) as { data?: { todoItemAggregate: unknown[] }; errors?: unknown }
  if (!body.data) throw new Error(`GraphQL failed: ${JSON.stringify(body.errors)}`)
  return body.data.todoItemAggregate.length
}

/** The ways one scenario is run, the baseline first. */
function variants(scenario: Scenario, target: Target): Variant[] {
  return [
    {
      label: 'knex, SQL by hand',
      runOnce: async () => {
        const result = await target.db.raw(scenario.sql[target.database])
        // better-sqlite3 answers the rows, mysql2 [rows, fields], pg a result with rows.
        if (target.database === 'postgres') return result.rows.length
        return (target.database === 'mysql' ? result[0] : result).length
      }
    },
    {
      label: 'service.aggregate',
      runOnce: async () => (await target.service.aggregate(scenario.request)).length
    },
    {
      label: 'GraphQL over HTTP',
      runOnce: () => postGraphql(target.baseUrl, scenario.graphql)
    }
  ]
}

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]

/**
 * Median milliseconds per variant. Every variant is run (and its group count checked) before any is timed,
 * and the timed runs are interleaved, so that cache warming and load on the database server weigh on every
 * variant alike rather than on whichever runs first.
 */
async function timeVariants(variants: Variant[]) {
  const groups = await variants[0].runOnce()
  for (const variant of variants.slice(1)) {
    const answered = await variant.runOnce()
    if (answered !== groups) throw new Error(`${variant.label} gave ${answered} groups, expected ${groups}`)
  }
  const samples: number[][] = variants.map(() => [])
  for (let run = 0; run < runs; run++) {
    for (const [index, variant] of variants.entries()) {
      const started = performance.now()
      await variant.runOnce()
      samples[index].push(performance.now() - started)
    }
  }
  return { groups, medians: samples.map(median) }
}

async function benchOne(database: DatabaseName, table: string[][]) {
  const bench = await benchDatabase(database)
  try {
    const seeding = performance.now()
    await seedTodoItems(bench.db, rows, { log: console.log })
    const seconds = ((performance.now() - seeding) / 1000).toFixed(1)
    console.log(`${database}: seeded ${rows.toLocaleString()} rows in ${seconds} s`)
    const { app, db } = await createApp({ databaseUrl: bench.url })
    const server: Server = await app.listen(0)
    const address = server.address()
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    const service = app.service('todo-items') as unknown as ResourceService
    const target: Target = { database, db, service, baseUrl }
    try {
      for (const scenario of scenarios) {
        const runners = variants(scenario, target)
        const { groups, medians } = await timeVariants(runners)
        runners.forEach((variant, index) => {
          const ratio = (medians[index] / medians[0]).toFixed(2)
          const name = `${scenario.name} (${groups} groups)`
          table.push([database, name, variant.label, medians[index].toFixed(1), ratio])
        })
      }
    } finally {
      await new Promise((resolve) => server.close(resolve))
      await db.destroy()
    }
  } finally {
    await bench.drop()
  }
}

async function main() {
  console.log(`Aggregate benchmark, ${rows.toLocaleString()} rows, median of ${runs} runs`)
  const table: string[][] = []
  for (const database of benchDatabaseNames()) await benchOne(database, table)
  const header = ['db', 'scenario', 'variant', 'median ms', 'ratio']
  const widths = [8, 34, 20, 11, 6]
  console.log(
    '\n' + [header, ...table].map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('')).join('\n')
  )
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
