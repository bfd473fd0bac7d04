import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa } from '@feathersjs/koa'
import type { Server } from 'node:http'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { todoItemResource } from '../example/resources/todo-item'
import { defineResource, errorHandler, feathersQuery } from 'feathers-query'
import { benchDatabase, benchDatabaseNames, seedTodoItems } from './support/databases'
import { assertCompiledPlugin } from './support/compiled-plugin'

assertCompiledPlugin()

/**
 * Keyset paging benchmark: N todo items paged through GraphQL over HTTP (in this process), the first page
 * against a page near the end, with keyset cursors and with OFFSET paging for contrast. A keyset page finds
 * its start through the order's index, so the deep one should cost about what the first does (ratio near 1);
 * an offset page reads and drops every record before it. Prints the median of several runs and the ratio
 * of each deep page to the first page of its strategy.
 *
 *   npm run bench:keyset -- --rows 1000000 --runs 20  (MariaDB with MYSQL_URL, PostgreSQL with PG_URL)
 */
const { values } = parseArgs({ options: { rows: { type: 'string' }, runs: { type: 'string' } } })
const rows = Number(values.rows ?? 200_000)
const runs = Number(values.runs ?? 20)
const PAGE = 10

/** The example's TodoItem twice over its table: paged by keyset cursors, and by limit and offset. */
const { many: _many, sqlComputed: _sqlComputed, ...plain } = todoItemResource
const keysetItems = defineResource({ ...plain, graphql: { keyset: true } })
const offsetItems = defineResource({
  ...plain,
  name: 'OffsetItem',
  basePath: 'offset-items',
  graphql: { pagingStrategy: 'offset' }
})

interface Scenario {
  name: string
  /** GraphQL `sorting` argument. */
  sorting: string
}

const scenarios: Scenario[] = [
  { name: 'by id', sorting: '[]' },
  { name: 'by created DESC', sorting: '[{ field: created, direction: DESC }]' }
]

async function post(baseUrl: string, query: string) {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query })
  })
  const body = (await response.json()) as { data?: any; errors?: unknown[] }
  if (body.errors) throw new Error(JSON.stringify(body.errors))
  return body.data
}

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]

/** The median milliseconds of `query`, after warm-up runs; checks each answer holds a full page. */
async function time(baseUrl: string, query: string, count: (data: any) => number) {
  for (let run = 0; run < 5; run++) await post(baseUrl, query)
  const samples: number[] = []
  for (let run = 0; run < runs; run++) {
    const started = performance.now()
    const data = await post(baseUrl, query)
    samples.push(performance.now() - started)
    if (count(data) !== PAGE)
      throw new Error(`expected a page of ${PAGE}: ${JSON.stringify(data).slice(0, 200)}`)
  }
  return median(samples)
}

async function main() {
  const table: string[][] = []
  for (const database of benchDatabaseNames()) {
    const bench = await benchDatabase(database)
    await seedTodoItems(bench.db, rows)
    const app = koa(feathers())
    app.use(errorHandler(() => {}))
    app.use(bodyParser())
    app.configure(feathersQuery({ Model: bench.db, resources: [keysetItems, offsetItems] }))
    const server: Server = await app.listen(0)
    const address = server.address()
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    try {
      for (const { name, sorting } of scenarios) {
        const keyset = (paging: string) =>
          `{ todoItems(sorting: ${sorting}, paging: ${paging}) { edges { cursor node { id title } } pageInfo { startCursor } } }`
        const offset = (at: number) =>
          `{ offsetItems(sorting: ${sorting}, paging: { limit: ${PAGE}, offset: ${at} }) { nodes { id title } } }`
        // The last pages cost a keyset no count: `last` without a cursor reads the order backwards.
        const end = await post(baseUrl, keyset(`{ last: ${2 * PAGE} }`))
        const deepCursor = JSON.stringify(end.todoItems.pageInfo.startCursor)
        const edges = (data: any) => data.todoItems.edges.length
        const nodes = (data: any) => data.offsetItems.nodes.length
        const keysetFirst = await time(baseUrl, keyset(`{ first: ${PAGE} }`), edges)
        const keysetDeep = await time(baseUrl, keyset(`{ first: ${PAGE}, after: ${deepCursor} }`), edges)
        const offsetFirst = await time(baseUrl, offset(0), nodes)
        const offsetDeep = await time(baseUrl, offset(rows - 2 * PAGE), nodes)
        table.push(
          [database, name, 'keyset first page', keysetFirst.toFixed(2), '1.00'],
          [database, name, 'keyset deep page', keysetDeep.toFixed(2), (keysetDeep / keysetFirst).toFixed(2)],
          [database, name, 'offset first page', offsetFirst.toFixed(2), '1.00'],
          [database, name, 'offset deep page', offsetDeep.toFixed(2), (offsetDeep / offsetFirst).toFixed(2)]
        )
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await bench.drop()
    }
  }
  console.log(
    `Keyset paging benchmark, ${rows.toLocaleString()} rows, pages of ${PAGE}, median of ${runs} runs`
  )
  console.log('ratio: against the first page of the same strategy, database and order')
  const header = ['db', 'order', 'page', 'median ms', 'ratio']
  const widths = header.map((title, column) =>
    Math.max(title.length, ...table.map((row) => row[column].length))
  )
  for (const row of [header, ...table])
    console.log(row.map((cell, column) => cell.padEnd(widths[column])).join('  '))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
