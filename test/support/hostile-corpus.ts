/**
 * A deterministic corpus of malformed and hostile requests. Every request that could write is made invalid
 * on purpose (an unknown or ill-typed field, a missing record, a broken body), so that the database must be
 * exactly as before once the corpus has run; read requests may be valid and carry hostile values anyway.
 */
import { standIns } from '../../src/service/compiled-statement'

/**
 * The values the statement compiler binds in place of a caller's while it compiles a shape (two strings, and
 * two of the integers LIMIT and OFFSET stand in as): a caller sending one must get its own value's answer.
 */
export const STAND_INS = standIns(4, 2)
export const STAND_IN_STRINGS = STAND_INS.filter((value): value is string => typeof value === 'string')
export const STAND_IN_INTEGERS = STAND_INS.filter((value): value is number => typeof value === 'number')

/**
 * What a read means, for the oracle (filter-oracle.ts) to compute its answer from the seeded records: a GraphQL
 * filter (the page's `totalCount`, its ids when `wholePage`, or the groups' counts summed), or the REST list's
 * query parameters.
 */
export type ExpectedRead =
  { graphqlFilter: unknown; answer: 'page' | 'wholePage' | 'groups' } | { restList: Array<[string, string]> }

export interface HostileRequest {
  method: string
  path: string
  body?: string
  headers: Record<string, string>
  read?: ExpectedRead
}

function random(seed: number) {
  // mulberry32: small, fast and reproducible.
  return () => {
    seed |= 0
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const HOSTILE_STRINGS = [
  '',
  ' ',
  'abc',
  '-1',
  '0',
  '1.5',
  '1e309',
  '-1e309',
  '9'.repeat(400),
  'NaN',
  'Infinity',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  "' OR '1'='1",
  '1; DROP TABLE todo_items; --',
  '" OR ""="',
  "') OR ('a'='a",
  '`id`',
  '%',
  '_',
  '%%%%',
  '\\',
  '\\%',
  '\u0000',
  '\u202e',
  '😀🔥',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'x'.repeat(3000),
  '2026-13-45T99:99:99Z',
  '0000-00-00 00:00:00',
  'YXJyYXljb25uZWN0aW9uOi0x',
  'YXJyYXljb25uZWN0aW9uOjk5OTk5OTk5OTk5OTk5OTk5OQ==',
  '=cmd|"/c calc"!A1',
  // graphql-jit's own markers, which it once turned back into code when they appeared in a literal.
  '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d0),x:(globalThis.FQ_HOSTILE=1),y:(0',
  '__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8',
  ...STAND_IN_STRINGS,
  ...STAND_IN_INTEGERS.map(String)
]

export const HOSTILE_VALUES: unknown[] = [
  ...HOSTILE_STRINGS,
  -1,
  0,
  1.5,
  2 ** 31,
  2 ** 53 + 1,
  -(2 ** 63),
  1e308,
  ...STAND_IN_INTEGERS,
  true,
  false,
  null,
  [],
  [1, 2],
  {},
  { $gt: '' },
  { eq: 1 },
  { __proto__: { polluted: true } },
  'x'.repeat(20000)
]

/** The aggregate route's parameters, besides the filters of QUERY_NAMES. */
const AGGREGATE_NAMES = [
  'groupBy',
  'count',
  'countDistinct',
  'sum',
  'avg',
  'min',
  'max',
  'having',
  'sort',
  'fill',
  'timeZone',
  'totalCount'
]

const QUERY_NAMES = [
  'limit',
  'offset',
  'id',
  'title',
  'description',
  'completed',
  'priority',
  'created',
  'updated',
  'age',
  'query',
  'createdBy',
  'sort',
  '$limit',
  'filter[title][like]',
  'title[$ne]',
  '__proto__',
  'constructor[prototype]',
  "title' OR 1=1",
  'todoItemId'
]

export const FIELDS = ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority']
export const OPERATORS = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'notLike',
  'iLike',
  'notILike',
  'in',
  'notIn',
  'is',
  'isNot',
  'between',
  'notBetween'
]

function pick<T>(next: () => number, values: readonly T[]): T {
  return values[Math.floor(next() * values.length)]
}

function json(value: unknown) {
  return JSON.stringify(value)
}

/** A hostile value as a GraphQL literal, and the value it stands for; objects become ranges of two. */
function graphqlValue(next: () => number): { text: string; value: unknown } {
  const value = pick(next, HOSTILE_VALUES)
  const scalar = (item: unknown) =>
    typeof item === 'string' ? json(item) : String(item as number | boolean | null)
  if (Array.isArray(value)) return { text: `[${value.map((item) => json(item)).join(', ')}]`, value }
  if (typeof value !== 'object' || value === null) return { text: scalar(value), value }
  const bound = () => {
    const chosen = pick(next, HOSTILE_VALUES)
    return typeof chosen === 'object' && chosen !== null ? String(next()) : chosen
  }
  const [lower, upper] = [bound(), bound()]
  return { text: `{lower: ${scalar(lower)}, upper: ${scalar(upper)}}`, value: { lower, upper } }
}

function graphqlLiteral(next: () => number): string {
  return graphqlValue(next).text
}

function nestedFilter(depth: number, operator: 'and' | 'or', id: number) {
  let text = `{id: {eq: ${id}}}`
  let value: unknown = { id: { eq: id } }
  for (let level = 0; level < depth; level++) {
    text = `{${operator}: [${text}]}`
    value = { [operator]: [value] }
  }
  return { text, value }
}

function restRequest(next: () => number, ids: number[]): HostileRequest {
  const kind = Math.floor(next() * 8)
  const missingId = 9_000_000 + Math.floor(next() * 1000)
  const value = () => {
    const chosen = pick(next, HOSTILE_VALUES)
    return typeof chosen === 'string' ? chosen : json(chosen)
  }
  const parameters = (names = QUERY_NAMES): Array<[string, string]> =>
    Array.from({ length: 1 + Math.floor(next() * 3) }, () => [pick(next, names), value().slice(0, 1500)])
  const queryString = (names = QUERY_NAMES, chosen = parameters(names)) =>
    chosen.map(([name, text]) => `${encodeURIComponent(name)}=${encodeURIComponent(text)}`).join('&')
  const jsonHeaders = { 'content-type': 'application/json' }
  switch (kind) {
    case 0: {
      const chosen = parameters()
      return {
        method: 'GET',
        path: `/todo-items?${queryString(QUERY_NAMES, chosen)}`,
        headers: {},
        read: { restList: chosen }
      }
    }
    case 1:
      return { method: 'GET', path: `/todo-items/${encodeURIComponent(value().slice(0, 1500))}`, headers: {} }
    case 2:
      // The CSV export, or the aggregate route with its own parameters and the filters.
      return next() < 0.5
        ? { method: 'GET', path: `/todo-items/export?${queryString()}`, headers: {} }
        : {
            method: 'GET',
            path: `/todo-items/aggregate?${queryString([...AGGREGATE_NAMES, ...QUERY_NAMES])}`,
            headers: {}
          }
    case 3: {
      // Creates are always invalid: a hostile value in a typed field, or an unknown field next to it.
      const field = pick(next, [
        'title',
        'completed',
        'priority',
        'description',
        'id',
        'created',
        'age',
        'extra'
      ])
      const body: Record<string, unknown> = {
        title: pick(next, HOSTILE_STRINGS),
        [field]: pick(next, HOSTILE_VALUES)
      }
      body[pick(next, ['unknown', '__proto__x', 'createdBy', 'id'])] = 1
      return { method: 'POST', path: '/todo-items', body: json(body), headers: jsonHeaders }
    }
    case 4: {
      // Updates of existing records carry an invalid property; others target a record that does not exist.
      const existing = next() < 0.5
      const body: Record<string, unknown> = { [pick(next, FIELDS)]: pick(next, HOSTILE_VALUES) }
      if (existing)
        body[pick(next, ['nope', 'age', 'created', 'createdBy'])] = pick(next, HOSTILE_VALUES) ?? 1
      const id = existing ? pick(next, ids) : missingId
      return {
        method: pick(next, ['PUT', 'PATCH']),
        path: `/todo-items/${id}`,
        body: json(body),
        headers: jsonHeaders
      }
    }
    case 5: {
      const broken = pick(next, [
        '{',
        '{"title": }',
        '[',
        'null',
        '"string"',
        '{"title": "x",}',
        '\u0000',
        '{"a":' + '['.repeat(5000)
      ])
      const headers = pick(next, [
        jsonHeaders,
        { 'content-type': 'text/plain' },
        { 'content-type': 'application/x-www-form-urlencoded' },
        { 'content-type': 'multipart/form-data; boundary=x' },
        {}
      ])
      return {
        method: pick(next, ['POST', 'PUT', 'PATCH']),
        path: `/todo-items${next() < 0.5 ? '' : `/${pick(next, ids)}`}`,
        body: broken,
        headers
      }
    }
    case 6:
      return {
        method: 'DELETE',
        // Never empty: `DELETE /todo-items/` is Feathers' remove of every record the query reaches (multi).
        path: `/todo-items/${encodeURIComponent(next() < 0.5 ? String(missingId) : value().slice(0, 500) || '\u0000')}`,
        headers: {}
      }
    default:
      return {
        method: pick(next, ['PUT', 'PATCH', 'DELETE', 'POST', 'OPTIONS', 'PROPFIND']),
        path: pick(next, ['/todo-items/export', '/todo-items/1/2', '/sub-tasks/%', '/todo-items/%E0%A4%A']),
        headers: {}
      }
  }
}

/** `count` aliases of `field` in one selection. */
function aliases(count: number, field: string) {
  return Array.from({ length: count }, (_, index) => `a${index}: ${field}`).join(' ')
}

/** Every seeded record fits one page of 50, in id order. */
const WHOLE_PAGE = ', paging: {first: 50}, sorting: [{field: id, direction: ASC}]'
const PAGE_IDS = '{ totalCount edges { node { id } } }'

function graphqlRequest(next: () => number, ids: number[]): HostileRequest {
  const kind = Math.floor(next() * 11)
  const headers = { 'content-type': 'application/json' }
  const query = (text: string, variables?: unknown) => ({
    method: 'POST',
    path: '/graphql',
    body: json({ query: text, variables }),
    headers
  })
  const field = () => pick(next, [...FIELDS, 'age', 'createdBy', "title' OR 1=1", '__proto__'])
  switch (kind) {
    case 0: {
      const [name, operator, { text, value }] = [field(), pick(next, OPERATORS), graphqlValue(next)]
      return {
        ...query(`{ todoItems(filter: {${name}: {${operator}: ${text}}}${WHOLE_PAGE}) ${PAGE_IDS} }`),
        read: { graphqlFilter: { [name]: { [operator]: value } }, answer: 'wholePage' }
      }
    }
    case 1:
      return query(
        `{ todoItems(sorting: [{field: ${pick(next, ['id', 'title', 'age', 'DROP', 'created'])}, direction: ${pick(next, ['ASC', 'DESC', 'UP'])}, nulls: ${pick(next, ['NULLS_FIRST', 'NULLS_LAST', 'NONE'])}}]) { edges { node { id } } } }`
      )
    case 2:
      return query(
        `{ todoItems(paging: {first: ${pick(next, ['0', '-1', '51', '2147483648', '1.5', '"x"', 'null'])}, after: ${graphqlLiteral(next)}}) { pageInfo { endCursor } } }`
      )
    case 3: {
      const depth = Math.floor(next() * 60)
      const { text, value } = nestedFilter(depth, pick(next, ['and', 'or']), pick(next, ids))
      return {
        ...query(`{ todoItems(filter: ${text}${WHOLE_PAGE}) ${PAGE_IDS} }`),
        read: { graphqlFilter: value, answer: 'wholePage' }
      }
    }
    case 4: {
      // The page's totalCount does not depend on the hostile paging; its ids are compared where it is whole.
      const filter = { [field()]: { [pick(next, OPERATORS)]: pick(next, HOSTILE_VALUES) } }
      const whole = next() < 0.5
      const paging = whole
        ? { first: 50 }
        : { first: pick(next, HOSTILE_VALUES), before: pick(next, HOSTILE_STRINGS) }
      return {
        ...query(
          `query($f: TodoItemFilter, $p: CursorPaging) { todoItems(filter: $f, paging: $p, sorting: [{field: id, direction: ASC}]) ${PAGE_IDS} }`,
          { f: filter, p: paging }
        ),
        read: { graphqlFilter: filter, answer: whole ? 'wholePage' : 'page' }
      }
    }
    case 5:
      return query(
        `{ todoItem(id: ${graphqlLiteral(next)}) { id title subTasks(paging: {last: ${pick(next, ['1', '0', '-5', '100'])}, before: ${graphqlLiteral(next)}}) { edges { node { id } } } } }`
      )
    case 6: {
      const [name, operator, { text, value }] = [field(), pick(next, OPERATORS), graphqlValue(next)]
      const group = pick(next, ['completed', 'created(by: WEEK)', 'created(by: DECADE)', 'age', 'createdBy'])
      return {
        ...query(
          `{ todoItemAggregate(filter: {${name}: {${operator}: ${text}}}) { groupBy { ${group} } count { id } } }`
        ),
        read: { graphqlFilter: { [name]: { [operator]: value } }, answer: 'groups' }
      }
    }
    case 7: {
      // Every record as a group, under many aliases, at the root or per parent of a page.
      const groups = pick(next, [
        'groupBy { id title description }',
        'groupBy { id } count { id }',
        'groupBy { created(by: DAY) title }'
      ])
      const field =
        next() < 0.5
          ? `todoItemAggregate { ${groups} }`
          : `todoItems(paging: {first: 50}) { edges { node { subTasksAggregate { ${groups} } } } }`
      return query(`{ ${aliases(1 + Math.floor(next() * 12), field)} }`)
    }
    case 8: {
      // Many statements from a small document: counts, aggregates and relations under aliases.
      const field = pick(next, [
        'todoItems { totalCount }',
        'todoItemAggregate { count { id } }',
        'todoItems(paging: {first: 50}) { edges { node { subTasks { totalCount } } } }'
      ])
      return query(`{ ${aliases(1 + Math.floor(next() * 80), field)} }`)
    }
    case 9: {
      // A valid query behind up to 300 KB of comments, which are no tokens.
      const lines = Math.floor(next() * 3000)
      return query(
        `${'# padding padding padding padding padding padding padding padding padding padding padding\n'.repeat(lines)}{ todoItems { totalCount } }`
      )
    }
    default: {
      const body = pick(next, [
        '{',
        '{"query": 1}',
        '{"query": "{"}',
        '{"query": "mutation { x }"}',
        '{"query": "{ todoItems { edges { node { id } } } }", "variables": "x"}',
        'null',
        '[]',
        `{"query": "${'{ a '.repeat(300)}"}`,
        '{"query": "subscription { a }"}'
      ])
      return {
        method: pick(next, ['POST', 'GET', 'PUT']),
        path: pick(next, [
          '/graphql',
          '/graphql?query=%7B',
          '/graphql?query=' + encodeURIComponent('{ todoItems { totalCount } }') + '&variables=%7B'
        ]),
        body: body,
        headers: pick(next, [headers, { 'content-type': 'text/plain' }, {}])
      }
    }
  }
}

/**
 * Requests at and past the limits of the query model and of what each database stores, each sent once: valid
 * GraphQL filters beyond SQLite's limits, searches of many words, in lists of ever new lengths, dates past
 * year 9999 and days that do not exist, numbers JavaScript reads and the API does not, lone surrogates.
 */
function limitProbes(ids: number[]): HostileRequest[] {
  const headers = { 'content-type': 'application/json' }
  const query = 'query($f: TodoItemFilter) { todoItems(filter: $f) { totalCount } }'
  const count = (filter: unknown) => ({
    method: 'POST',
    path: '/graphql',
    body: json({ query, variables: { f: filter } }),
    headers
  })
  const list = (length: number, from = 0) => Array.from({ length }, (_, index) => from + index)
  const probes: HostileRequest[] = [
    count({ or: list(999).map((n) => ({ priority: { eq: n } })) }),
    count({ and: list(40).map((n) => ({ id: { notIn: list(1000, n * 1000) } })) }),
    count({ title: { like: '%'.repeat(50_001) } }),
    count({ title: { iLike: `%${'_%'.repeat(600)}` } }),
    count({ created: { gt: '9999-12-31T23:59:59.999-14:00' } }),
    count({ created: { lt: '0000-12-31T23:59:59.999Z' } }),
    count({ created: { eq: '2026-02-30T00:00:00Z' } }),
    count({ title: { in: ['\ud800', 'a\udfff'] } }),
    { method: 'POST', path: '/todo-items', body: json({ title: 'half \ud83d' }), headers },
    { method: 'PATCH', path: `/todo-items/${ids[0]}`, body: json({ description: '\udc00' }), headers },
    {
      method: 'GET',
      path: `/todo-items?query=${list(1000)
        .map((n) => `w${n}`)
        .join('%20')}`,
      headers: {}
    },
    { method: 'GET', path: `/todo-items/export?query=${'x%20'.repeat(600)}`, headers: {} },
    { method: 'GET', path: '/todo-items?created=9999-12-31T23%3A59%3A59.999-14%3A00', headers: {} }
  ]
  for (const raw of ['0x4', '0b100', '4e0', '%204', 'Infinity']) {
    probes.push({ method: 'GET', path: `/todo-items?id=${raw}&limit=${raw}`, headers: {} })
  }
  for (let length = 1; length <= 20; length++) probes.push(count({ id: { in: list(length * 37) } }))
  return probes
}

/** `count` requests, half REST and half GraphQL, the same for the same seed; the limit probes among them. */
export function hostileCorpus(count: number, ids: number[], seed = 20261122): HostileRequest[] {
  const next = random(seed)
  const probes = limitProbes(ids)
  const generated = Array.from({ length: count - probes.length }, (_, index) =>
    index % 2 ? graphqlRequest(next, ids) : restRequest(next, ids)
  )
  return [...generated, ...probes]
}
