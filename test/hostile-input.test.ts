import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import type { Knex } from 'knex'
import { forEachDatabase } from './support/server'
import { tableRows } from './support/tables'
import { clearTables, seedTodoItems } from './support/seed'
import { hostileCorpus, type HostileRequest } from './support/hostile-corpus'

const CORPUS_SIZE = 6000

async function checksum(db: Knex) {
  return createHash('sha256')
    .update(JSON.stringify(await tableRows(db, ['todo_items', 'sub_tasks'])))
    .digest('hex')
}

interface Outcome {
  request: HostileRequest
  status: number
  problem?: string
}

/** What makes an answer well-formed: Feathers error JSON for REST, GraphQL errors with a code for GraphQL. */
function problemWith(
  request: HostileRequest,
  status: number,
  text: string,
  type: string
): string | undefined {
  if (status >= 500) return `status ${status}`
  if (request.method === 'HEAD') return undefined
  const graphql = request.path.startsWith('/graphql')
  if (status < 400 && !graphql) return undefined
  if (!type.includes('json')) return `non-JSON ${status} answer (${type}): ${text.slice(0, 100)}`
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return `unparsable JSON: ${text.slice(0, 100)}`
  }
  if (graphql) {
    if (status >= 400 || body.errors) {
      if (!Array.isArray(body.errors) || body.errors.length === 0)
        return 'GraphQL error answer without errors'
      for (const error of body.errors) {
        if (typeof error.message !== 'string') return 'GraphQL error without a message'
        if (typeof error.extensions?.code !== 'string')
          return `GraphQL error without extensions.code: ${error.message}`
        if (error.extensions.code === 'INTERNAL_SERVER_ERROR') return `internal error: ${error.message}`
      }
    }
    return undefined
  }
  const wellFormed =
    typeof body.name === 'string' &&
    typeof body.message === 'string' &&
    body.code === status &&
    typeof body.className === 'string'
  return wellFormed ? undefined : `malformed error body: ${text.slice(0, 120)}`
}

forEachDatabase('Hostile input: thousands of malformed requests', (env) => {
  let ids: number[] = []
  before(async () => {
    await clearTables(env.server.db)
    ids = await seedTodoItems(
      env.server.db,
      Array.from({ length: 40 }, (_, index) => ({
        title: `Item ${index}`,
        description: index % 2 ? null : 'd'
      }))
    )
    await env.server.db('sub_tasks').insert(
      ids.slice(0, 10).map((id, index) => ({
        title: `Sub ${index}`,
        completed: false,
        created: new Date('2026-01-01T00:00:00Z'),
        updated: new Date('2026-01-01T00:00:00Z'),
        todoItemId: id
      }))
    )
  })

  it(`answers ${CORPUS_SIZE} hostile requests without a 5xx or a malformed answer, and changes nothing`, async function () {
    this.timeout(300000)
    const before = await checksum(env.server.db)
    const corpus = hostileCorpus(CORPUS_SIZE, ids)
    const outcomes: Outcome[] = []
    let position = 0
    const worker = async () => {
      while (position < corpus.length) {
        const request = corpus[position++]
        const withBody = request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD'
        const response = await fetch(env.server.baseUrl + request.path, {
          method: request.method,
          headers: request.headers,
          body: withBody ? request.body : undefined
        })
        const text = await response.text()
        const type = response.headers.get('content-type') ?? ''
        outcomes.push({
          request,
          status: response.status,
          problem: problemWith(request, response.status, text, type)
        })
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker))
    const problems = outcomes.filter((outcome) => outcome.problem)
    assert.deepEqual(
      problems
        .slice(0, 5)
        .map(
          (outcome) =>
            `${outcome.request.method} ${outcome.request.path.slice(0, 200)} ${outcome.request.body?.slice(0, 200) ?? ''} → ${outcome.problem}`
        ),
      [],
      `${problems.length} of ${outcomes.length} answers were not well-formed`
    )
    assert.equal(outcomes.length, CORPUS_SIZE)
    const rejected = outcomes.filter((outcome) => outcome.status >= 400).length
    assert.ok(
      rejected > CORPUS_SIZE / 3,
      `only ${rejected} requests were refused: the corpus is not hostile enough`
    )
    assert.equal(await checksum(env.server.db), before, 'the database changed')
    // The server runs in this process: a string that became code would have set this.
    assert.equal((globalThis as { FQ_HOSTILE?: unknown }).FQ_HOSTILE, undefined, 'a request ran code')
  })
})
