import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems } from './support/seed'
import { codes, cursor, graphql } from './support/graphql'

const PAGE = `query Page($paging: CursorPaging, $sorting: [TodoItemSort!], $filter: TodoItemFilter) {
  todoItems(paging: $paging, sorting: $sorting, filter: $filter) {
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { title description priority } }
  }
}`

const title = (n: number) => `item-${String(n).padStart(2, '0')}`

forEachDatabase('GraphQL: cursor paging and sorting', (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(
      env.server.db,
      Array.from({ length: 25 }, (_, index) => ({
        title: title(index + 1),
        description: (index + 1) % 4 === 0 ? null : `d${String(index + 1).padStart(2, '0')}`,
        priority: (index + 1) % 3
      }))
    )
  })

  async function page(variables: Record<string, unknown>) {
    const response = await graphql(env.server, PAGE, variables)
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    const connection = response.data.todoItems
    return { ...connection, titles: connection.edges.map((edge: any) => edge.node.title) as string[] }
  }

  it('returns the first 10 in default order, with offset cursors', async () => {
    const first = await page({})
    assert.deepEqual(
      first.titles,
      Array.from({ length: 10 }, (_, index) => title(index + 1))
    )
    assert.deepEqual(
      first.edges.map((edge: any) => edge.cursor),
      Array.from({ length: 10 }, (_, index) => cursor(index))
    )
    assert.deepEqual(first.pageInfo, {
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: cursor(0),
      endCursor: cursor(9)
    })
    assert.equal(first.pageInfo.startCursor, 'YXJyYXljb25uZWN0aW9uOjA=', 'the reference encoding')
    assert.deepEqual((await page({ paging: null })).titles, first.titles, 'null paging is the default')
    assert.deepEqual((await page({ paging: {} })).titles, first.titles, 'no first is the default size')
  })

  it('pages forward across page boundaries to the end', async () => {
    const seen: string[] = []
    let after: string | undefined
    const flags: Array<[boolean, boolean]> = []
    for (;;) {
      const current = await page({ paging: { first: 7, ...(after ? { after } : {}) } })
      seen.push(...current.titles)
      flags.push([current.pageInfo.hasPreviousPage, current.pageInfo.hasNextPage])
      if (!current.pageInfo.hasNextPage) break
      after = current.pageInfo.endCursor
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 25 }, (_, index) => title(index + 1))
    )
    assert.deepEqual(flags, [
      [false, true],
      [true, true],
      [true, true],
      [true, false]
    ])
    const pastTheEnd = await page({ paging: { first: 5, after: cursor(24) } })
    assert.deepEqual(pastTheEnd.titles, [])
    assert.deepEqual(pastTheEnd.pageInfo, {
      hasNextPage: false,
      hasPreviousPage: true,
      startCursor: null,
      endCursor: null
    })
    const afterOnly = await page({ paging: { after: cursor(19) } })
    assert.deepEqual(afterOnly.titles, [title(21), title(22), title(23), title(24), title(25)])
  })

  it('pages backward across page boundaries to the start', async () => {
    const seen: string[][] = []
    let before = cursor(24)
    const flags: Array<[boolean, boolean]> = []
    for (;;) {
      const current = await page({ paging: { last: 10, before } })
      seen.unshift(current.titles)
      flags.push([current.pageInfo.hasPreviousPage, current.pageInfo.hasNextPage])
      if (!current.pageInfo.hasPreviousPage) break
      before = current.pageInfo.startCursor
    }
    assert.deepEqual(
      seen.flat(),
      Array.from({ length: 24 }, (_, index) => title(index + 1))
    )
    assert.deepEqual(
      seen.map((titles) => titles.length),
      [4, 10, 10]
    )
    assert.deepEqual(flags, [
      [true, true],
      [true, true],
      [false, true]
    ])
    const short = await page({ paging: { last: 7, before: cursor(3) } })
    assert.deepEqual(short.titles, [title(1), title(2), title(3)])
    assert.equal(short.pageInfo.startCursor, cursor(0))
    assert.equal(short.pageInfo.endCursor, cursor(2))
    const nothingBefore = await page({ paging: { last: 3, before: cursor(0) } })
    assert.deepEqual(nothingBefore.titles, [])
    assert.deepEqual(nothingBefore.pageInfo, {
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: null
    })
    const cursors = (await page({ paging: { last: 2, before: cursor(10) } })).edges.map(
      (edge: any) => edge.cursor
    )
    assert.deepEqual(cursors, [cursor(8), cursor(9)])
  })

  it('sorts by several fields, pages stably in that order, and places nulls as asked', async () => {
    const sorting = [
      { field: 'priority', direction: 'DESC' },
      { field: 'title', direction: 'ASC' }
    ]
    const all = await page({ sorting, paging: { first: 25 } })
    const expected = Array.from({ length: 25 }, (_, index) => ({ t: title(index + 1), p: (index + 1) % 3 }))
      .sort((a, b) => b.p - a.p || a.t.localeCompare(b.t))
      .map((item) => item.t)
    assert.deepEqual(all.titles, expected)
    const paged: string[] = []
    for (let after: string | undefined, more = true; more;) {
      const current = await page({ sorting, paging: { first: 6, ...(after ? { after } : {}) } })
      paged.push(...current.titles)
      more = current.pageInfo.hasNextPage
      after = current.pageInfo.endCursor
    }
    assert.deepEqual(paged, expected)

    const nullTitles = ['item-04', 'item-08', 'item-12', 'item-16', 'item-20', 'item-24']
    const descriptions = async (direction: string, nulls?: string) =>
      (
        await page({
          sorting: [{ field: 'description', direction, ...(nulls ? { nulls } : {}) }],
          paging: { first: 25 }
        })
      ).titles
    const ascFirst = await descriptions('ASC', 'NULLS_FIRST')
    assert.deepEqual(ascFirst.slice(0, 6), nullTitles)
    assert.deepEqual(ascFirst.slice(6, 8), ['item-01', 'item-02'])
    const ascLast = await descriptions('ASC', 'NULLS_LAST')
    assert.deepEqual(ascLast.slice(-6), nullTitles)
    assert.deepEqual(ascLast.slice(0, 2), ['item-01', 'item-02'])
    const descFirst = await descriptions('DESC', 'NULLS_FIRST')
    assert.deepEqual(descFirst.slice(0, 7), [...nullTitles, 'item-25'])
    const descLast = await descriptions('DESC', 'NULLS_LAST')
    assert.deepEqual(descLast.slice(0, 2), ['item-25', 'item-23'])
    assert.deepEqual(descLast.slice(-6), nullTitles)
    assert.deepEqual(await descriptions('ASC'), ascFirst, 'nulls sort as the smallest value by default')
    assert.deepEqual(await descriptions('DESC'), descLast)
  })

  it('filters, sorts and pages together', async () => {
    const current = await page({
      filter: { priority: { eq: 0 } },
      sorting: [{ field: 'title', direction: 'DESC' }],
      paging: { first: 3, after: cursor(1) }
    })
    assert.deepEqual(current.titles, ['item-18', 'item-15', 'item-12'])
    assert.deepEqual([current.pageInfo.hasPreviousPage, current.pageInfo.hasNextPage], [true, true])
  })

  it('counts totalCount only when it is selected', async () => {
    const query = (selection: string) =>
      `{ todoItems(paging: {first: 5}, filter: {priority: {eq: 1}}) { ${selection} } }`
    let response: any
    const counted = (statements: string[]) => statements.map((sql) => /count\(\*\) as [`"]?total/i.test(sql))
    const withCount = await env.server.recordStatements(async () => {
      response = await graphql(env.server, query('totalCount edges { cursor }'))
    })
    assert.equal(response.data.todoItems.totalCount, 9)
    // The count is a subquery of the page's statement.
    assert.deepEqual(counted(withCount), [true])
    const withoutCount = await env.server.recordStatements(async () => {
      response = await graphql(env.server, query('edges { cursor }'))
    })
    assert.deepEqual(counted(withoutCount), [false])
    const throughFragment = await graphql(
      env.server,
      `
        {
          todoItems(paging: { first: 1 }) {
            ...counted
          }
        }
        fragment counted on TodoItemConnection {
          ... on TodoItemConnection {
            totalCount
          }
        }
      `
    )
    assert.equal(throughFragment.data.todoItems.totalCount, 25)
    const empty = await graphql(
      env.server,
      '{ todoItems(filter: {title: {eq: "none"}}) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor } } }'
    )
    assert.deepEqual(empty.data.todoItems, {
      totalCount: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      edges: []
    })
  })

  it('refuses bad paging with BAD_USER_INPUT naming the argument', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{ first: 0 }, ['paging.first']],
      [{ first: -1 }, ['paging.first']],
      [{ first: 51 }, ['paging.first']],
      [{ last: 51, before: cursor(60) }, ['paging.last']],
      [{ last: 0, before: cursor(3) }, ['paging.last']],
      [{ first: 2, last: 2 }, ['paging.last']],
      [{ after: cursor(1), before: cursor(5) }, ['paging.before']],
      [{ first: 2, before: cursor(5) }, ['paging.first']],
      [{ last: 2, after: cursor(1) }, ['paging.last']],
      [{ last: 2 }, ['paging.last']],
      [{ after: 'not a cursor' }, ['paging.after']],
      [{ after: Buffer.from('arrayconnection:-1').toString('base64') }, ['paging.after']],
      [{ before: Buffer.from('something:3').toString('base64'), last: 2 }, ['paging.before']],
      [{ first: 1, after: Buffer.from('arrayconnection:1.5').toString('base64') }, ['paging.after']]
    ]
    for (const [paging, fields] of cases) {
      const response = await graphql(env.server, PAGE, { paging })
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'], JSON.stringify(paging))
      assert.deepEqual(
        response.errors![0].extensions.errors!.map((error) => error.field),
        fields,
        JSON.stringify(paging)
      )
      assert.equal(response.data, null)
    }
    const notAnInt = await graphql(env.server, PAGE, { paging: { first: 'ten' } })
    assert.deepEqual(codes(notAnInt), ['BAD_USER_INPUT'])
  })

  it('refuses bad sorting without running anything', async () => {
    const unknown = await graphql(env.server, PAGE, { sorting: [{ field: 'age', direction: 'ASC' }] })
    assert.deepEqual(codes(unknown), ['BAD_USER_INPUT'], 'plain fields are not sortable')
    const noDirection = await graphql(env.server, PAGE, { sorting: [{ field: 'title' }] })
    assert.deepEqual(codes(noDirection), ['BAD_USER_INPUT'])
  })
})
