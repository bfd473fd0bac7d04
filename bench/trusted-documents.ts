import autocannon from 'autocannon'
import { get } from 'node:http'
import { benchDatabase, benchDatabaseNames, seedSubTasks, seedTodoItems } from './support/databases'
import { cpuMicrosOf, startScript } from './support/processes'
import { assertCompiledPlugin } from './support/compiled-plugin'
import { loadFlags } from './support/flags'
import { printTable } from './support/table'

assertCompiledPlugin()

/**
 * A client asking for a registered document by id against the same client sending the whole document: the
 * server with the page below registered, loaded by autocannon with each form of the same read in turn. Prints
 * requests/s, CPU time and bytes sent per request of each, and the ratio of each to the POST of the whole
 * document measured in the same round. The round with the median ratio of the GET by id is reported.
 *
 *   npm run bench:trusted -- --items 10000 --seconds 3 --rounds 3 --connections 20
 */
const { items, seconds, rounds, connections } = loadFlags({ seconds: 3, rounds: 3 })

const LIST = `query DashboardList {
  todoItems(paging: { first: 25 }, filter: { completed: { is: false } }) {
    totalCount
    edges {
      node {
        id
        title
        completed
        priority
        subTasks(paging: { first: 10 }) {
          edges {
            node {
              id
              title
            }
          }
        }
      }
    }
  }
}`

const JSON_BODY = { 'content-type': 'application/json' }

interface Form {
  name: string
  method: 'GET' | 'POST'
  path: string
  body?: string
  headers: Record<string, string>
}

const forms: Form[] = [
  {
    name: 'POST, whole document',
    method: 'POST',
    path: '/graphql',
    body: JSON.stringify({ query: LIST }),
    headers: JSON_BODY
  },
  {
    name: 'POST, documentId',
    method: 'POST',
    path: '/graphql',
    body: JSON.stringify({ documentId: 'dashboard' }),
    headers: JSON_BODY
  },
  { name: 'GET, documentId', method: 'GET', path: '/graphql?documentId=dashboard', headers: {} }
]

interface Result {
  rps: number
  cpu: number
  /** Bytes of the request autocannon sends, its line and body. */
  requestBytes: number
  unexpected: number
}

function firstTag(port: number, path: string) {
  return new Promise<string | undefined>((resolve, reject) => {
    get(`http://127.0.0.1:${port}${path}`, (response) => {
      response.resume()
      response.on('end', () => resolve(response.headers.etag))
    }).on('error', reject)
  })
}

async function load(server: { port: number; pid: number }, form: Form): Promise<Result> {
  const cpuBefore = cpuMicrosOf(server.pid)
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    duration: seconds,
    requests: [{ method: form.method, path: form.path, body: form.body, headers: form.headers }]
  })
  const total = Math.max(1, result.requests.total)
  const expected = form.headers['if-none-match'] ? '3xx' : '2xx'
  const answered = (result as unknown as Record<string, number>)[expected] ?? 0
  return {
    rps: result.requests.average,
    cpu: (cpuMicrosOf(server.pid) - cpuBefore) / total,
    requestBytes: form.method.length + form.path.length + (form.body?.length ?? 0),
    unexpected: result.requests.total - answered
  }
}

async function main() {
  const rows: string[][] = []
  for (const name of benchDatabaseNames()) {
    const database = await benchDatabase(name)
    const script = startScript('support/trusted-documents-server.ts', {
      DATABASE_URL: database.url,
      TRUSTED_DOCUMENTS: JSON.stringify({ dashboard: LIST })
    })
    try {
      await seedTodoItems(database.db, items, { spanDays: 730 })
      await seedSubTasks(database.db, 10)
      const { child, payload } = await script.ready
      const server = { port: Number(payload), pid: child.pid! }
      const etag = await firstTag(server.port, '/graphql?documentId=dashboard')
      if (!etag) throw new Error('The GET by id was not tagged')
      const all: Form[] = [
        ...forms,
        {
          name: 'GET, documentId, If-None-Match (304)',
          method: 'GET',
          path: forms[2].path,
          headers: { 'if-none-match': etag }
        }
      ]
      for (const form of all) await load(server, form)
      const measured: Array<Map<Form, Result>> = []
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? all : [...all].reverse()
        const results = new Map<Form, Result>()
        for (const form of order) results.set(form, await load(server, form))
        measured.push(results)
      }
      const ratio = (results: Map<Form, Result>, form: Form) =>
        results.get(form)!.rps / results.get(all[0])!.rps
      const sorted = [...measured].sort((a, b) => ratio(a, all[2]) - ratio(b, all[2]))
      const median = sorted[Math.floor(sorted.length / 2)]
      for (const form of all) {
        const ratios = measured.map((results) => ratio(results, form)).sort((a, b) => a - b)
        const result = median.get(form)!
        rows.push([
          name,
          form.name,
          result.rps.toFixed(0),
          ratio(median, form).toFixed(2),
          `${ratios[0].toFixed(2)}–${ratios[ratios.length - 1].toFixed(2)}`,
          result.cpu.toFixed(0),
          String(result.requestBytes),
          String(measured.reduce((sum, results) => sum + results.get(form)!.unexpected, 0))
        ])
      }
    } finally {
      script.child.kill()
      await database.drop()
    }
  }
  const header = [
    'db',
    'form',
    'req/s',
    'ratio to POST whole',
    'range',
    'CPU µs/req',
    'request bytes',
    'unexpected'
  ]
  printTable([header, ...rows])
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
