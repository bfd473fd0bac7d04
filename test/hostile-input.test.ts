import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import type { Knex } from 'knex'
import { forEachDatabase } from './support/server'
import { tableRows } from './support/tables'
import { clearTables, seedTodoItems, type TodoSeed } from './support/seed'
import {
  FIELDS,
  HOSTILE_STRINGS,
  HOSTILE_VALUES,
  OPERATORS,
  hostileCorpus,
  type HostileRequest
} from './support/hostile-corpus'
import { graphqlFilterIds, Refused, restListPage, type OracleItem } from './support/filter-oracle'

const CORPUS_SIZE = 6000

async function checksum(db: Knex) {
  return createHash('sha256')
    .update(JSON.stringify(await tableRows(db, ['todo_items', 'sub_tasks'])))
    .digest('hex')
}

interface Outcome {
  request: HostileRequest
  status: number
  /** A 200 without GraphQL errors. */
  answered: boolean
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

const SEEDED_AT = Date.parse('2026-01-01T00:00:00.000Z')

/**
 * Forty records whose values hostile filters can hit: titles that are hostile strings themselves (patterns,
 * quotes, a lone space), descriptions and priorities that repeat, some missing, created a second apart.
 */
function hostileSeeds(): TodoSeed[] {
  const titles = HOSTILE_STRINGS.filter(
    (value) => value.length >= 1 && value.length <= 100 && !value.includes('\u0000')
  ).slice(0, 20)
  return Array.from({ length: 40 }, (_, index) => ({
    title: titles[index] ?? `Item ${index}`,
    description: index % 2 ? null : ['d', 'abc', '%', 'D'][(index / 2) % 4],
    completed: index % 3 === 0,
    priority: [0, -1, 1.5, 2 ** 31, 0][index % 5],
    created: new Date(SEEDED_AT + index * 1000).toISOString()
  }))
}

function oracleItems(seeds: TodoSeed[], ids: number[]): OracleItem[] {
  return seeds.map((seed, index) => ({
    id: ids[index],
    title: seed.title,
    description: seed.description ?? null,
    completed: seed.completed ?? false,
    priority: seed.priority ?? 0,
    created: Date.parse(seed.created!),
    updated: Date.parse(seed.created!)
  }))
}

/** Where a read the server answered with a 200 differs from what the oracle computes for it. */
function differenceFromOracle(
  request: HostileRequest,
  status: number,
  text: string,
  items: OracleItem[]
): string | undefined {
  const read = request.read
  if (!read || status !== 200) return undefined
  const body = JSON.parse(text)
  if ('graphqlFilter' in read && body.errors) return undefined
  let expected: unknown
  let actual: unknown
  try {
    if ('restList' in read) {
      const page = restListPage(items, read.restList, 50)
      if (!page) return undefined
      expected = page
      actual = { ids: body.nodes.map((node: { id: number }) => node.id), totalCount: body.totalCount }
    } else {
      const ids = graphqlFilterIds(items, read.graphqlFilter)
      if (read.answer === 'groups') {
        expected = ids.length
        actual = body.data.todoItemAggregate.reduce(
          (sum: number, group: { count: { id: number } }) => sum + group.count.id,
          0
        )
      } else {
        const page = body.data.todoItems
        expected = read.answer === 'wholePage' ? { ids, totalCount: ids.length } : ids.length
        actual =
          read.answer === 'wholePage'
            ? {
                ids: page.edges.map((edge: { node: { id: string } }) => Number(edge.node.id)),
                totalCount: page.totalCount
              }
            : page.totalCount
      }
    }
  } catch (error) {
    if (error instanceof Refused) return `answered 200 where the oracle refuses: ${error.message}`
    throw error
  }
  const same = JSON.stringify(actual) === JSON.stringify(expected)
  return same ? undefined : `answered ${JSON.stringify(actual)}, the oracle ${JSON.stringify(expected)}`
}

/**
 * Sends the requests, eight at a time, and judges each answer: well-formed (`problemWith`) and, for a read,
 * what the oracle computes.
 */
async function sendAll(baseUrl: string, requests: HostileRequest[], items: OracleItem[]) {
  const outcomes: Outcome[] = []
  let position = 0
  const worker = async () => {
    while (position < requests.length) {
      const request = requests[position++]
      const withBody = request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD'
      const response = await fetch(baseUrl + request.path, {
        method: request.method,
        headers: request.headers,
        body: withBody ? request.body : undefined
      })
      const text = await response.text()
      const type = response.headers.get('content-type') ?? ''
      const problem =
        problemWith(request, response.status, text, type) ??
        differenceFromOracle(request, response.status, text, items)
      const graphql = request.path.startsWith('/graphql')
      const answered = response.status === 200 && !problem && (!graphql || !JSON.parse(text).errors)
      outcomes.push({ request, status: response.status, answered, problem })
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return outcomes
}

forEachDatabase('Hostile input: thousands of malformed requests', (env) => {
  let ids: number[] = []
  let items: OracleItem[] = []
  before(async () => {
    await clearTables(env.server.db)
    const seeds = hostileSeeds()
    ids = await seedTodoItems(env.server.db, seeds)
    items = oracleItems(seeds, ids)
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
    const outcomes = await sendAll(env.server.baseUrl, corpus, items)
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
    const compared = outcomes.filter((outcome) => outcome.request.read && outcome.status === 200).length
    assert.ok(compared > CORPUS_SIZE / 10, `only ${compared} reads were compared with the oracle`)
    const rejected = outcomes.filter((outcome) => outcome.status >= 400).length
    assert.ok(
      rejected > CORPUS_SIZE / 3,
      `only ${rejected} requests were refused: the corpus is not hostile enough`
    )
    assert.equal(await checksum(env.server.db), before, 'the database changed')
    // The server runs in this process: a string that became code would have set this.
    assert.equal((globalThis as { FQ_HOSTILE?: unknown }).FQ_HOSTILE, undefined, 'a request ran code')
  })

  it('answers each operator on each field, with each hostile value, as the oracle computes', async function () {
    this.timeout(300000)
    const query = `query($f: TodoItemFilter) {
      todoItems(filter: $f, paging: {first: 50}, sorting: [{field: id, direction: ASC}]) ${'{'} totalCount edges { node { id } } }
    }`
    const at = (index: number) => new Date(SEEDED_AT + index * 1000).toISOString()
    const ranges = [
      { lower: -1, upper: 2 ** 31 },
      { lower: 5, upper: 1 },
      { lower: '%', upper: 'abc' },
      { lower: 'Item 21', upper: 'Item 3' },
      { lower: String(ids[3]), upper: String(ids[9]) },
      { lower: at(3), upper: at(9) },
      { lower: at(9), upper: at(3) },
      { lower: true, upper: false }
    ]
    const requests: HostileRequest[] = []
    for (const field of FIELDS) {
      for (const operator of OPERATORS) {
        const values = operator.endsWith('etween') ? ranges : [...HOSTILE_VALUES, at(7), String(ids[5])]
        for (const value of values) {
          const filter = { [field]: { [operator]: value } }
          requests.push({
            method: 'POST',
            path: '/graphql',
            body: JSON.stringify({ query, variables: { f: filter } }),
            headers: { 'content-type': 'application/json' },
            read: { graphqlFilter: filter, answer: 'wholePage' }
          })
        }
      }
    }
    const outcomes = await sendAll(env.server.baseUrl, requests, items)
    const problems = outcomes
      .filter((outcome) => outcome.problem)
      .map(
        ({ request, problem }) => `${request.body!.slice(request.body!.indexOf('"variables"'))} → ${problem}`
      )
    const compared = outcomes.filter((outcome) => outcome.answered).length
    assert.deepEqual(problems.slice(0, 12), [], `${problems.length} of ${requests.length} answers differ`)
    assert.ok(compared > requests.length / 5, `only ${compared} of ${requests.length} reads were valid`)
  })
})
