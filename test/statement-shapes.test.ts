import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'

/**
 * Statements are compiled once per shape (columns, filter operators, order, paging) and run with each call's
 * values. These calls repeat shapes with other values, one after another on the same server: a value kept
 * from an earlier call, or bound in the wrong place, shows up as the wrong records.
 */
const TITLES = `query Titles($filter: TodoItemFilter, $paging: CursorPaging) {
  todoItems(filter: $filter, paging: $paging, sorting: [{field: priority, direction: DESC}]) {
    totalCount
    edges { node { title } }
  }
}`

forEachDatabase('Statements compiled per shape bind each call its own values', (env) => {
  let ids: number[] = []
  before(async () => {
    await clearTables(env.server.db)
    ids = await seedTodoItems(env.server.db, [
      { title: 'a_1', priority: 1, completed: true },
      { title: 'b%2', priority: 2, completed: false },
      { title: 'c_3', priority: 3, completed: true },
      { title: 'd%4', priority: 4, completed: false },
      { title: 'e_5', priority: 5, completed: true }
    ])
  })

  async function titles(filter: unknown, paging: unknown = { first: 10 }) {
    const response = await graphql(env.server, TITLES, { filter, paging })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const { totalCount, edges } = response.data.todoItems
    return { totalCount, titles: edges.map((edge: { node: { title: string } }) => edge.node.title) }
  }

  it('comparisons, ranges and lists of the same length', async () => {
    assert.deepEqual(await titles({ priority: { gte: 2, lt: 4 } }), { totalCount: 2, titles: ['c_3', 'b%2'] })
    assert.deepEqual(await titles({ priority: { gte: 4, lt: 6 } }), { totalCount: 2, titles: ['e_5', 'd%4'] })
    assert.deepEqual(await titles({ priority: { between: { lower: 1, upper: 2 } } }), {
      totalCount: 2,
      titles: ['b%2', 'a_1']
    })
    assert.deepEqual(await titles({ priority: { between: { lower: 3, upper: 5 } } }), {
      totalCount: 3,
      titles: ['e_5', 'd%4', 'c_3']
    })
    assert.deepEqual(await titles({ title: { in: ['a_1', 'e_5'] } }), {
      totalCount: 2,
      titles: ['e_5', 'a_1']
    })
    assert.deepEqual(await titles({ title: { in: ['b%2', 'c_3'] } }), {
      totalCount: 2,
      titles: ['c_3', 'b%2']
    })
    assert.deepEqual(await titles({ title: { in: ['b%2', 'c_3', 'd%4'] } }), {
      totalCount: 3,
      titles: ['d%4', 'c_3', 'b%2']
    })
  })

  it('patterns, whose bound value the dialect rewrites (GLOB on SQLite)', async () => {
    assert.deepEqual(await titles({ title: { like: 'a%' } }), { totalCount: 1, titles: ['a_1'] })
    assert.deepEqual(await titles({ title: { like: 'd%' } }), { totalCount: 1, titles: ['d%4'] })
    assert.deepEqual(await titles({ title: { iLike: 'B%' } }), { totalCount: 1, titles: ['b%2'] })
    assert.deepEqual(await titles({ title: { iLike: 'C%' } }), { totalCount: 1, titles: ['c_3'] })
  })

  it('pages whose filter binds hundreds of values', async () => {
    // The page's LIMIT and OFFSET come after the filter's values in the statement's bindings.
    const many = (kept: number[]) => [
      ...kept.map(String),
      ...Array.from({ length: 300 }, (_, n) => String(-1 - n))
    ]
    assert.deepEqual(await titles({ id: { in: many([ids[0], ids[2]]) } }, { first: 1 }), {
      totalCount: 2,
      titles: ['c_3']
    })
    const after = await pageCursor(1)
    assert.deepEqual(await titles({ id: { in: many([ids[1], ids[3], ids[4]]) } }, { first: 1, after }), {
      totalCount: 3,
      titles: ['d%4']
    })
  })

  it('lists of any length share a few statements: SQLite and PostgreSQL bind one array, MySQL pads them', async () => {
    const texts = new Set<string>()
    for (let length = 1; length <= 100; length++) {
      const list = Array.from({ length }, (_, index) => String(index < 2 ? ids[index] : -index))
      const statements = await env.server.recordStatements(async () => {
        const found = length === 1 ? ['a_1'] : ['b%2', 'a_1']
        assert.deepEqual(await titles({ id: { in: list } }), { totalCount: found.length, titles: found })
      })
      for (const sql of statements) texts.add(sql)
    }
    // One statement a length, the page with its count: 1, and 11 lengths on MySQL (1, 2, 4, 8, 16, 32, 48, ...
    // 112), not 100.
    const expected = { mysql: 11, postgres: 1, sqlite: 1 }[env.server.database]
    assert.equal(texts.size, expected, [...texts].join('\n'))
  })

  it('lists match as equality does, for values JSON escapes and numbers it writes in short', async () => {
    const odd = ['q"uote', 'back\\slash', 'ünï😀', 'tab\tline\n', '\u0001', "it's", '%_']
    const rows = await seedTodoItems(
      env.server.db,
      odd.map((title, index) => ({
        title,
        priority: [0.1, 1e-7, 123456789.123, -0.5, 2 ** 53, 1 / 3, 7][index],
        created: new Date(Date.UTC(2027, 2, 4, 5, 6, 7, 89 + index)).toISOString()
      }))
    )
    try {
      const inList = await titles({ title: { in: [...odd, 'absent'] } })
      assert.deepEqual(inList.titles.sort(), [...odd].sort())
      const byNumber = await titles({ priority: { in: [0.1, 1e-7, 123456789.123, -0.5, 2 ** 53, 1 / 3] } })
      assert.equal(byNumber.totalCount, 6)
      const notIn = await titles({ title: { notIn: odd.slice(1) }, id: { in: rows.map(String) } })
      assert.deepEqual(notIn.titles, [odd[0]])
      const dates = ['2027-03-04T05:06:07.089Z', '2027-03-04T06:06:07.090+01:00', '2027-03-04T05:06:08.000Z']
      assert.equal((await titles({ created: { in: dates } })).totalCount, 2)
    } finally {
      await env.server.db('todo_items').whereIn('id', rows).delete()
    }
  })

  it('is true and is false, which are different statements', async () => {
    assert.deepEqual(await titles({ completed: { is: true } }), {
      totalCount: 3,
      titles: ['e_5', 'c_3', 'a_1']
    })
    assert.deepEqual(await titles({ completed: { is: false } }), { totalCount: 2, titles: ['d%4', 'b%2'] })
  })

  it('pages: the first, then later ones at other offsets', async () => {
    assert.deepEqual((await titles({}, { first: 2 })).titles, ['e_5', 'd%4'])
    assert.deepEqual((await titles({}, { first: 2, after: await pageCursor(2) })).titles, ['c_3', 'b%2'])
    assert.deepEqual((await titles({}, { first: 2, after: await pageCursor(3) })).titles, ['b%2', 'a_1'])
    assert.deepEqual((await titles({}, { first: 1, after: await pageCursor(1) })).titles, ['d%4'])
  })

  async function pageCursor(position: number) {
    const response = await graphql(
      env.server,
      `
        query ($first: Int) {
          todoItems(paging: { first: $first }, sorting: [{ field: priority, direction: DESC }]) {
            pageInfo {
              endCursor
            }
          }
        }
      `,
      { first: position }
    )
    return response.data.todoItems.pageInfo.endCursor
  }

  it('REST pages and equality filters', async () => {
    const list = async (query: string) => (await env.server.http('GET', `/todo-items?${query}`)).body
    const first = await list('completed=true&limit=2')
    assert.deepEqual(
      first.nodes.map((node: any) => node.title),
      ['a_1', 'c_3']
    )
    assert.equal(first.totalCount, 3)
    const second = await list('completed=true&limit=2&offset=2')
    assert.deepEqual(
      second.nodes.map((node: any) => node.title),
      ['e_5']
    )
    const other = await list('completed=false&limit=1&offset=1')
    assert.deepEqual(
      other.nodes.map((node: any) => node.title),
      ['d%4']
    )
    assert.equal(other.totalCount, 2)
  })

  it("aggregates: each call's filter values, and the series a fill spans, in a statement of the same shape", async () => {
    const request = async (document: string, filter: unknown) => {
      const response = await graphql(env.server, document, { filter })
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      return response.data.todoItemAggregate
    }
    const byCompleted = `query($filter: TodoItemAggregateFilter) {
      todoItemAggregate(filter: $filter) { groupBy { completed } count { id } sum { priority } }
    }`
    assert.deepEqual(await request(byCompleted, { priority: { gte: 2 } }), [
      { groupBy: { completed: false }, count: { id: 2 }, sum: { priority: 6 } },
      { groupBy: { completed: true }, count: { id: 2 }, sum: { priority: 8 } }
    ])
    assert.deepEqual(await request(byCompleted, { priority: { lte: 3 } }), [
      { groupBy: { completed: false }, count: { id: 1 }, sum: { priority: 2 } },
      { groupBy: { completed: true }, count: { id: 2 }, sum: { priority: 4 } }
    ])
    // Every item was created on 2026-01-01; the filter's bounds decide which days the series answers.
    const byDay = `query($filter: TodoItemAggregateFilter) {
      todoItemAggregate(filter: $filter) { groupBy { created(by: DAY, fill: {}) } count { id } }
    }`
    const series = async (lower: string, upper: string) =>
      (await request(byDay, { created: { between: { lower, upper } } })).map(
        (group: { groupBy: { created: string }; count: { id: number } }) => [
          group.groupBy.created.slice(0, 10),
          group.count.id
        ]
      )
    assert.deepEqual(await series('2025-12-30T00:00:00.000Z', '2026-01-01T12:00:00.000Z'), [
      ['2025-12-30', 0],
      ['2025-12-31', 0],
      ['2026-01-01', 5]
    ])
    assert.deepEqual(await series('2026-01-01T00:00:00.000Z', '2026-01-02T12:00:00.000Z'), [
      ['2026-01-01', 5],
      ['2026-01-02', 0]
    ])
  })

  it("aggregates whose request holds a number the compiler itself binds in place of a call's values", async () => {
    // An aggregate's having, paging and functions are its statement's own values; a request may send any
    // number, including those the compiler stands in for LIMIT and OFFSET (1,987,654,000 on). Such a
    // statement cannot be compiled once: each call builds it, and the value stays the client's.
    const STAND_IN = 1_987_654_000
    for (const [index, bound] of [STAND_IN, STAND_IN + 1, STAND_IN, 5].entries()) {
      const response = await graphql(
        env.server,
        `
          query ($bound: Float!, $filter: TodoItemAggregateFilter) {
            todoItemAggregate(filter: $filter, having: { sum: { priority: { lt: $bound } } }) {
              groupBy {
                completed
              }
              sum {
                priority
              }
            }
          }
        `,
        { bound, filter: { priority: { gte: index % 2 } } }
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const expected = [
        { groupBy: { completed: false }, sum: { priority: 6 } },
        { groupBy: { completed: true }, sum: { priority: 9 } }
      ].filter((group) => group.sum.priority < bound)
      assert.deepEqual(response.data.todoItemAggregate, expected, `having sum < ${bound}`)
    }
  })

  it('reads by id', async () => {
    for (const [index, id] of ids.entries()) {
      const response = await env.server.http('GET', `/todo-items/${id}`)
      assert.equal(response.body.priority, index + 1)
    }
    const item = `query($id: ID!) { todoItem(id: $id) { title } }`
    assert.equal((await graphql(env.server, item, { id: String(ids[1]) })).data.todoItem.title, 'b%2')
    assert.equal((await graphql(env.server, item, { id: String(ids[3]) })).data.todoItem.title, 'd%4')
  })
})
