import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'

const TITLES = `query Titles($filter: TodoItemFilter) {
  todoItems(filter: $filter, paging: {first: 50}) { edges { node { title } } }
}`

forEachDatabase('GraphQL: filters', (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(env.server.db, [
      {
        title: 'Alpha',
        description: 'first',
        completed: false,
        priority: 1,
        created: '2026-01-01T00:00:00.000Z'
      },
      { title: 'beta', description: null, completed: true, priority: 2, created: '2026-01-02T00:00:00.000Z' },
      {
        title: 'Gamma',
        description: 'third',
        completed: false,
        priority: 3,
        created: '2026-01-03T00:00:00.000Z'
      },
      {
        title: 'delta',
        description: null,
        completed: true,
        priority: 4.5,
        created: '2026-01-04T00:00:00.000Z'
      },
      {
        title: 'Epsilon_x',
        description: 'fifth',
        completed: false,
        priority: 0,
        created: '2026-01-05T00:00:00.000Z'
      }
    ])
  })

  async function titles(filter: unknown) {
    const response = await graphql(env.server, TITLES, { filter })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    return response.data.todoItems.edges.map((edge: { node: { title: string } }) => edge.node.title)
  }

  async function ids() {
    const rows = await env.server.db('todo_items').select('id').orderBy('id')
    return rows.map((row) => String(row.id))
  }

  const day = (n: number) => `2026-01-0${n}T00:00:00.000Z`

  const cases: Array<[string, unknown, string[]]> = [
    ['no filter', {}, ['Alpha', 'beta', 'Gamma', 'delta', 'Epsilon_x']],
    // Strings: binary collation on every database, so upper case sorts before lower case.
    ['title eq', { title: { eq: 'Alpha' } }, ['Alpha']],
    ['title neq', { title: { neq: 'Alpha' } }, ['beta', 'Gamma', 'delta', 'Epsilon_x']],
    ['title gt', { title: { gt: 'Gamma' } }, ['beta', 'delta']],
    ['title gte', { title: { gte: 'delta' } }, ['delta']],
    ['title lt', { title: { lt: 'B' } }, ['Alpha']],
    ['title lte', { title: { lte: 'Alpha' } }, ['Alpha']],
    ['title like (case-sensitive)', { title: { like: 'A%' } }, ['Alpha']],
    ['title like lower case', { title: { like: 'a%' } }, []],
    ['title like with _', { title: { like: 'Epsilon__' } }, ['Epsilon_x']],
    // A backslash escapes the next character on every database (MySQL's LIKE default, SQLite translated).
    ['title like with an escaped _', { title: { like: 'Epsilon\\_x' } }, ['Epsilon_x']],
    ['an escaped _ is no wildcard', { title: { like: 'Epsilo\\_%' } }, []],
    ['an escaped % is no wildcard', { title: { like: 'Alpha\\%' } }, []],
    ['an escaped letter is the letter', { title: { like: '\\Alph\\a' } }, ['Alpha']],
    ['iLike with an escaped _', { title: { iLike: 'EPSILON\\_X' } }, ['Epsilon_x']],
    ['iLike: an escaped _ is no wildcard', { title: { iLike: 'epsilo\\_%' } }, []],
    ['title notLike', { title: { notLike: '%ta' } }, ['Alpha', 'Gamma', 'Epsilon_x']],
    ['title iLike', { title: { iLike: '%A' } }, ['Alpha', 'beta', 'Gamma', 'delta']],
    ['title notILike', { title: { notILike: '%A' } }, ['Epsilon_x']],
    ['title in', { title: { in: ['Alpha', 'delta', 'nope'] } }, ['Alpha', 'delta']],
    ['title notIn', { title: { notIn: ['Alpha', 'delta'] } }, ['beta', 'Gamma', 'Epsilon_x']],
    ['description is null', { description: { is: null } }, ['beta', 'delta']],
    ['description isNot null', { description: { isNot: null } }, ['Alpha', 'Gamma', 'Epsilon_x']],
    ['description eq', { description: { eq: 'third' } }, ['Gamma']],
    ['completed is true', { completed: { is: true } }, ['beta', 'delta']],
    ['completed is false', { completed: { is: false } }, ['Alpha', 'Gamma', 'Epsilon_x']],
    ['completed isNot true', { completed: { isNot: true } }, ['Alpha', 'Gamma', 'Epsilon_x']],
    ['completed isNot false', { completed: { isNot: false } }, ['beta', 'delta']],
    ['priority eq', { priority: { eq: 2 } }, ['beta']],
    ['priority neq', { priority: { neq: 2 } }, ['Alpha', 'Gamma', 'delta', 'Epsilon_x']],
    ['priority gt', { priority: { gt: 2 } }, ['Gamma', 'delta']],
    ['priority gte', { priority: { gte: 3 } }, ['Gamma', 'delta']],
    ['priority lt', { priority: { lt: 1 } }, ['Epsilon_x']],
    ['priority lte', { priority: { lte: 1 } }, ['Alpha', 'Epsilon_x']],
    ['priority in', { priority: { in: [1, 4.5] } }, ['Alpha', 'delta']],
    ['priority notIn', { priority: { notIn: [1, 4.5] } }, ['beta', 'Gamma', 'Epsilon_x']],
    [
      'priority between (inclusive)',
      { priority: { between: { lower: 1, upper: 3 } } },
      ['Alpha', 'beta', 'Gamma']
    ],
    ['priority notBetween', { priority: { notBetween: { lower: 1, upper: 3 } } }, ['delta', 'Epsilon_x']],
    ['priority is null', { priority: { is: null } }, []],
    ['several operators are ANDed', { priority: { gte: 1, lte: 3, neq: 2 } }, ['Alpha', 'Gamma']],
    ['created eq', { created: { eq: day(2) } }, ['beta']],
    ['created neq', { created: { neq: day(2) } }, ['Alpha', 'Gamma', 'delta', 'Epsilon_x']],
    ['created gt', { created: { gt: day(3) } }, ['delta', 'Epsilon_x']],
    ['created gte', { created: { gte: day(3) } }, ['Gamma', 'delta', 'Epsilon_x']],
    ['created lt', { created: { lt: day(2) } }, ['Alpha']],
    ['created lte', { created: { lte: day(2) } }, ['Alpha', 'beta']],
    ['created with an offset', { created: { lt: '2026-01-02T01:00:00+02:00' } }, ['Alpha']],
    ['created in', { created: { in: [day(1), day(5)] } }, ['Alpha', 'Epsilon_x']],
    ['created notIn', { created: { notIn: [day(1), day(5)] } }, ['beta', 'Gamma', 'delta']],
    [
      'created between',
      { created: { between: { lower: day(2), upper: day(4) } } },
      ['beta', 'Gamma', 'delta']
    ],
    [
      'created notBetween',
      { created: { notBetween: { lower: day(2), upper: day(4) } } },
      ['Alpha', 'Epsilon_x']
    ],
    ['updated gte', { updated: { gte: day(4) } }, ['delta', 'Epsilon_x']],
    ['different fields are ANDed', { completed: { is: false }, priority: { gt: 0 } }, ['Alpha', 'Gamma']],
    ['or', { or: [{ title: { eq: 'Alpha' } }, { priority: { gte: 4 } }] }, ['Alpha', 'delta']],
    ['and', { and: [{ completed: { is: true } }, { priority: { gt: 3 } }] }, ['delta']],
    [
      'or nesting and, ANDed with a sibling field',
      {
        description: { is: null },
        or: [{ completed: { is: true } }, { and: [{ priority: { gte: 3 } }, { title: { like: 'G%' } }] }]
      },
      ['beta', 'delta']
    ],
    [
      'or nesting and',
      { or: [{ completed: { is: true } }, { and: [{ priority: { gte: 3 } }, { title: { like: 'G%' } }] }] },
      ['beta', 'Gamma', 'delta']
    ],
    [
      'empty and/or lists are no condition',
      { and: [], or: [] },
      ['Alpha', 'beta', 'Gamma', 'delta', 'Epsilon_x']
    ],
    ['a null comparison is no condition', { title: null }, ['Alpha', 'beta', 'Gamma', 'delta', 'Epsilon_x']]
  ]

  for (const [name, filter, expected] of cases) {
    it(`${name}: ${JSON.stringify(filter)}`, async () => {
      assert.deepEqual(await titles(filter), expected)
    })
  }

  it('filters ids given as strings, every ID operator included', async () => {
    const [a, b, c, d, e] = await ids()
    assert.deepEqual(await titles({ id: { eq: b } }), ['beta'])
    assert.deepEqual(await titles({ id: { neq: b } }), ['Alpha', 'Gamma', 'delta', 'Epsilon_x'])
    assert.deepEqual(await titles({ id: { gt: d } }), ['Epsilon_x'])
    assert.deepEqual(await titles({ id: { gte: d } }), ['delta', 'Epsilon_x'])
    assert.deepEqual(await titles({ id: { lt: b } }), ['Alpha'])
    assert.deepEqual(await titles({ id: { lte: b } }), ['Alpha', 'beta'])
    assert.deepEqual(await titles({ id: { in: [a, c, e] } }), ['Alpha', 'Gamma', 'Epsilon_x'])
    assert.deepEqual(await titles({ id: { notIn: [a, c, e] } }), ['beta', 'delta'])
    assert.deepEqual(await titles({ id: { is: null } }), [])
    assert.equal((await titles({ id: { isNot: null } })).length, 5)
    // Literal arguments take the same way as variables.
    const literal = await graphql(
      env.server,
      `{ todoItems(filter: {id: {in: ["${a}", ${Number(b)}]}}) { edges { node { title } } } }`
    )
    assert.deepEqual(
      literal.data.todoItems.edges.map((edge: any) => edge.node.title),
      ['Alpha', 'beta']
    )
  })

  it('gives the same records as REST for the same filter', async () => {
    const rest = await env.server.http('GET', '/todo-items?completed=true&limit=50')
    assert.equal(rest.status, 200)
    const response = await graphql(
      env.server,
      `
        {
          todoItems(filter: { completed: { is: true } }, paging: { first: 50 }) {
            edges {
              node {
                id
                title
                description
                completed
                created
                updated
                age
                priority
                subTasksCount
              }
            }
          }
        }
      `
    )
    const nodes = response.data.todoItems.edges.map((edge: any) => edge.node)
    const comparable = (record: any) => ({ ...record, id: String(record.id), age: undefined })
    assert.equal(nodes.length, 2)
    assert.deepEqual(nodes.map(comparable), rest.body.nodes.map(comparable))
    for (const [index, node] of nodes.entries())
      assert.ok(Math.abs(node.age - rest.body.nodes[index].age) < 60000)
  })

  it('refuses ill-typed values with BAD_USER_INPUT naming the field, never an internal error', async () => {
    const badVariable = await graphql(env.server, TITLES, { filter: { priority: { eq: 'high' } } })
    assert.deepEqual(codes(badVariable), ['BAD_USER_INPUT'])
    assert.equal(badVariable.data, undefined)

    const badDate = await graphql(env.server, TITLES, { filter: { created: { eq: 'yesterday' } } })
    assert.deepEqual(codes(badDate), ['BAD_USER_INPUT'])

    for (const [filter, field] of [
      [{ id: { eq: 'abc' } }, 'id.eq'],
      [{ title: { eq: null } }, 'title.eq'],
      [{ title: { is: true } }, 'title.is'],
      [{ title: { like: 'Alpha\\' } }, 'title.like'],
      [{ title: { notILike: 'a\\\\\\' } }, 'title.notILike'],
      [{ or: [{ priority: { gt: 1 } }, { id: { in: ['1', 'x'] } }] }, 'or.1.id.in.1']
    ] as const) {
      const response = await graphql(env.server, TITLES, { filter })
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'], JSON.stringify(filter))
      assert.deepEqual(
        response.errors![0].extensions.errors!.map((error) => error.field),
        [field],
        JSON.stringify(response.errors)
      )
    }

    const literal = await graphql(
      env.server,
      '{ todoItems(filter: {created: {eq: "yesterday"}}) { edges { cursor } } }'
    )
    assert.deepEqual(codes(literal), ['GRAPHQL_VALIDATION_FAILED'])
    const unknownField = await graphql(
      env.server,
      '{ todoItems(filter: {age: {eq: 1}}) { edges { cursor } } }'
    )
    assert.deepEqual(codes(unknownField), ['GRAPHQL_VALIDATION_FAILED'], 'plain fields are not filterable')
    const noBetween = await graphql(
      env.server,
      '{ todoItems(filter: {completed: {eq: true}}) { edges { cursor } } }'
    )
    assert.deepEqual(codes(noBetween), ['GRAPHQL_VALIDATION_FAILED'], 'booleans have is/isNot only')
  })
})
