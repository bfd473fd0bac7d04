import assert from 'node:assert/strict'
import { forEachDatabase, startServer, type TestServer } from './support/server'
import { codes, compactSdl, graphql } from './support/graphql'
import { createPagingApp, pagingApp } from './support/paging-app'

/** Board b has 2b cards (1: 2, 2: 4, 3: 6, 4: 8, 5: 10, 6: 12), ranked cyclically with NULLs among them. */
const BOARDS = 6

forEachDatabase(
  'GraphQL paging strategies: OFFSET and NONE, at the root and on relations',
  (env) => {
    before(async () => {
      const { db } = env.server
      await db('boards').insert(
        Array.from({ length: BOARDS }, (_, index) => ({ name: `board ${index + 1}` }))
      )
      const cards = []
      for (let board = 1; board <= BOARDS; board++) {
        for (let n = 0; n < 2 * board; n++)
          cards.push({ boardId: board, title: `b${board}c${n}`, rank: n % 3 ? n % 4 : null })
      }
      await db('cards').insert(cards)
      await db('labels').insert([{ name: 'red' }, { name: 'green' }, { name: 'blue' }])
    })

    /** The cards of a board in id order, from the table. */
    const cardsOf = async (board: number) =>
      (await env.server.db('cards').where('boardId', board).orderBy('id')).map((row) => String(row.id))

    async function ok(query: string, variables?: Record<string, unknown>) {
      const response = await graphql(env.server, query, variables)
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      return response.data
    }

    it('has nestjs-query’s types for each strategy', () => {
      const sdl = compactSdl(env.server)
      for (const part of [
        'boards( paging: OffsetPaging = {limit: 3} filter: BoardFilter = {} sorting: [BoardSort!] = [] ): BoardOffsetConnection!',
        'input OffsetPaging { limit: Int offset: Int }',
        'type BoardOffsetConnection { pageInfo: OffsetPageInfo! nodes: [Board!]! totalCount: Int! }',
        'type OffsetPageInfo { hasNextPage: Boolean hasPreviousPage: Boolean }',
        'cards( paging: OffsetPaging = {limit: 3} filter: CardFilter = {} sorting: [CardSort!] = [] ): BoardCardsConnection!',
        'type BoardCardsConnection { pageInfo: OffsetPageInfo! nodes: [Card!]! totalCount: Int! }',
        'cardList( filter: CardFilter = {} sorting: [CardSort!] = [] ): [Card!]!',
        'cardsByKey( paging: CursorPaging = {first: 3} filter: CardFilter = {} sorting: [CardSort!] = [] ): BoardCardsByKeyConnection!',
        'cards( paging: CursorPaging = {first: 3} filter: CardFilter = {} sorting: [CardSort!] = [] ): CardConnection!',
        'labels( filter: LabelFilter = {} sorting: [LabelSort!] = [] ): [Label!]!'
      ]) {
        assert.ok(sdl.includes(part), `SDL lacks: ${part}`)
      }
    })

    it('OFFSET at the root: limit and offset, page flags and totalCount', async () => {
      const data = await ok(`{
        first: boards { pageInfo { hasNextPage hasPreviousPage } totalCount nodes { name } }
        middle: boards(paging: { limit: 2, offset: 2 }) { pageInfo { hasNextPage hasPreviousPage } nodes { name } }
        last: boards(paging: { limit: 5, offset: 4 }, sorting: [{ field: id, direction: ASC }]) {
          pageInfo { hasNextPage hasPreviousPage } nodes { name cardCount } }
        sorted: boards(paging: { limit: 2 }, sorting: [{ field: cardCount, direction: DESC }]) { nodes { name } }
      }`)
      assert.deepEqual(data.first, {
        pageInfo: { hasNextPage: true, hasPreviousPage: false },
        totalCount: BOARDS,
        nodes: [{ name: 'board 1' }, { name: 'board 2' }, { name: 'board 3' }]
      })
      assert.deepEqual(data.middle, {
        pageInfo: { hasNextPage: true, hasPreviousPage: true },
        nodes: [{ name: 'board 3' }, { name: 'board 4' }]
      })
      assert.deepEqual(data.last, {
        pageInfo: { hasNextPage: false, hasPreviousPage: true },
        nodes: [
          { name: 'board 5', cardCount: 10 },
          { name: 'board 6', cardCount: 12 }
        ]
      })
      assert.deepEqual(data.sorted.nodes, [{ name: 'board 6' }, { name: 'board 5' }])
    })

    it('keeps the values a SQL-computed field binds itself, in statements compiled once per shape', async () => {
      const expected = await env.server
        .db('boards')
        .leftJoin('cards', (join) =>
          join.on('cards.boardId', '=', 'boards.id').andOn('cards.rank', '>=', env.server.db.raw('?', [2]))
        )
        .groupBy('boards.id')
        .orderBy('boards.id')
        .select('boards.id')
        .count({ n: 'cards.id' })
      const query = `{ boards(paging: { limit: 10 }, filter: { topCards: { gte: 0 } }) { nodes { id topCards } } }`
      for (let run = 0; run < 3; run++) {
        const data = await ok(query)
        assert.deepEqual(
          data.boards.nodes.map((board: any) => [Number(board.id), board.topCards]),
          expected.map((row: Record<string, any>) => [Number(row.id), Number(row.n)]),
          `run ${run}`
        )
      }
    })

    it('OFFSET refuses a limit out of range, a negative offset and cursor arguments', async () => {
      for (const [paging, field] of [
        ['{ limit: 11 }', 'paging.limit'],
        ['{ limit: 0 }', 'paging.limit'],
        ['{ offset: -1 }', 'paging.offset']
      ]) {
        const response = await graphql(env.server, `{ boards(paging: ${paging}) { nodes { id } } }`)
        assert.deepEqual(codes(response), ['BAD_USER_INPUT'], paging)
        assert.equal(response.errors![0].extensions.errors![0].field, field)
      }
      const cursorArgs = await graphql(
        env.server,
        `
          {
            boards(paging: { first: 2 }) {
              nodes {
                id
              }
            }
          }
        `
      )
      assert.deepEqual(codes(cursorArgs), ['GRAPHQL_VALIDATION_FAILED'])
    })

    it('OFFSET on a relation: a page per parent, in one statement whatever the page size', async () => {
      const query = (limit: number) => `{ boards(paging: { limit: 10 }) { nodes { id
        cards(paging: { limit: ${limit}, offset: 1 }) { pageInfo { hasNextPage hasPreviousPage } totalCount nodes { id } } } } }`
      const data = await ok(query(3))
      for (const board of data.boards.nodes) {
        const all = await cardsOf(Number(board.id))
        assert.deepEqual(board.cards, {
          pageInfo: { hasNextPage: all.length > 4, hasPreviousPage: true },
          totalCount: all.length,
          nodes: all.slice(1, 4).map((id) => ({ id }))
        })
      }
      const small = await env.server.countStatements(() => ok(query(1)))
      const large = await env.server.countStatements(() => ok(query(10)))
      assert.equal(small, 2, 'the boards, then the cards of every board')
      assert.equal(large, small)
    })

    it('NONE at the root: a plain list, no paging argument, an error past maxResultsSize', async () => {
      const data = await ok(`{ labels(sorting: [{ field: name, direction: ASC }]) { name } }`)
      assert.deepEqual(data.labels, [{ name: 'blue' }, { name: 'green' }, { name: 'red' }])
      const paged = await graphql(
        env.server,
        `
          {
            labels(paging: { first: 1 }) {
              name
            }
          }
        `
      )
      assert.deepEqual(codes(paged), ['GRAPHQL_VALIDATION_FAILED'])
      assert.match(paged.errors![0].message, /Unknown argument "paging"/)

      await env.server.db('labels').insert([{ name: 'cyan' }, { name: 'pink' }])
      try {
        const tooMany = await graphql(
          env.server,
          `
            {
              labels {
                name
              }
            }
          `
        )
        assert.deepEqual(codes(tooMany), ['BAD_USER_INPUT'])
        assert.match(tooMany.errors![0].message, /More than 4 Label records match/)
        const narrowed = await ok(`{ labels(filter: { name: { neq: "pink" } }) { name } }`)
        assert.equal(narrowed.labels.length, 4, 'exactly the maximum is a list')
      } finally {
        await env.server.db('labels').whereIn('name', ['cyan', 'pink']).delete()
      }
    })

    it('NONE on a relation: every record per parent, one statement, an error for a parent past the maximum', async () => {
      const data = await ok(
        `{ boards(paging: { limit: 4 }) { nodes { id cardList(sorting: [{ field: id, direction: DESC }]) { id } } } }`
      )
      for (const board of data.boards.nodes) {
        assert.deepEqual(
          board.cardList.map((card: { id: string }) => card.id),
          (await cardsOf(Number(board.id))).reverse()
        )
      }
      const statements = await env.server.countStatements(() =>
        ok(`{ boards(paging: { limit: 5 }) { nodes { cardList { id } } } }`)
      )
      assert.equal(statements, 2)
      // Board 6 has 12 cards, more than Card's maxResultsSize of 10: its list is an error, the others answer.
      const response = await graphql(
        env.server,
        `
          {
            boards(paging: { limit: 10 }) {
              nodes {
                id
                cardList {
                  id
                }
              }
            }
          }
        `
      )
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
      assert.deepEqual(response.errors![0].path, ['boards', 'nodes', 5, 'cardList'])
    })
  },
  createPagingApp
)

describe('GraphQL paging strategies: the cost of an unpaged list', () => {
  let server: TestServer
  before(async () => {
    server = await startServer('sqlite', pagingApp({ graphql: { limits: { maxComplexity: 300 } } }))
  })
  after(() => server.close())

  it('counts a NONE list as maxResultsSize records, an OFFSET page as its limit', async () => {
    // 10 boards × up to 10 cards × 5 fields: past 300, before any SQL runs.
    const list = `{ boards(paging: { limit: 10 }) { nodes { cardList { id title rank due boardId } } } }`
    const statements = await server.countStatements(async () => {
      const response = await graphql(server, list)
      assert.deepEqual(codes(response), ['QUERY_TOO_COMPLEX'])
    })
    assert.equal(statements, 0)
    const paged = `{ boards(paging: { limit: 10 }) { nodes { cards(paging: { limit: 2 }) { nodes { id title rank due boardId } } } } }`
    assert.deepEqual(codes(await graphql(server, paged)), [])
    const large = `{ boards(paging: { limit: 10 }) { nodes { cards(paging: { limit: 10 }) { nodes { id title rank due boardId } } } } }`
    assert.deepEqual(codes(await graphql(server, large)), ['QUERY_TOO_COMPLEX'])
  })
})
