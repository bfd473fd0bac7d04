import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { forEachDatabase } from './support/server'
import { codes, cursor as offsetCursor, graphql } from './support/graphql'
import { createPagingApp } from './support/paging-app'

interface Card {
  id: number
  rank: number | null
  due: string | null
}

interface Sort {
  field: 'rank' | 'due'
  direction: 'ASC' | 'DESC'
  nulls?: 'NULLS_FIRST' | 'NULLS_LAST'
}

const PAGE = `query Page($paging: CursorPaging, $sorting: [CardSort!], $filter: CardFilter) {
  cards(paging: $paging, sorting: $sorting, filter: $filter) {
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id rank due } }
  }
}`

/** Where `a` stands against `b` in `sort` then id ascending (NULLs smallest unless `nulls` says otherwise). */
function compare(sort: Sort, a: Card, b: Card) {
  const nullsFirst =
    (sort.nulls ?? (sort.direction === 'ASC' ? 'NULLS_FIRST' : 'NULLS_LAST')) === 'NULLS_FIRST'
  const x = a[sort.field]
  const y = b[sort.field]
  if (x === null || y === null) {
    if (x !== y) return (x === null ? -1 : 1) * (nullsFirst ? 1 : -1)
  } else if (x !== y) {
    return (x < y ? -1 : 1) * (sort.direction === 'ASC' ? 1 : -1)
  }
  return a.id - b.id
}

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString()

/** A cursor's JSON, and a cursor made from JSON: the format is nestjs-query's keyset cursor, in base64. */
const readCursor = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'))
const writeCursor = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64')

forEachDatabase(
  'GraphQL keyset cursors',
  (env) => {
    let nextTitle = 0
    const insert = async (board: number, rank: number | null, due: string | null) => {
      const [row] = await env.server
        .db('cards')
        .insert({ boardId: board, title: `card ${nextTitle++}`, rank, due: due && new Date(due) }, ['id'])
      const id = typeof row === 'object' ? Number(row.id) : Number(row)
      return { id, rank, due }
    }

    beforeEach(async () => {
      await env.server.db('cards').delete()
      await env.server.db('boards').delete()
      await env.server.db('boards').insert([
        { id: 1, name: 'one' },
        { id: 2, name: 'two' }
      ])
      for (let n = 0; n < 14; n++)
        await insert(1, n % 4 === 0 ? null : n % 5, n % 3 === 0 ? null : day(n % 6))
      for (let n = 0; n < 3; n++) await insert(2, n, day(n))
    })

    async function page(variables: Record<string, unknown>, headers?: Record<string, string>) {
      const response = await graphql(env.server, PAGE, variables, headers)
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const connection = response.data.cards
      const cards: Card[] = connection.edges.map((edge: any) => ({ ...edge.node, id: Number(edge.node.id) }))
      return { ...connection, cards } as { pageInfo: any; cards: Card[] }
    }

    const current = async (board?: number): Promise<Card[]> =>
      (await env.server.db('cards').modify((query) => (board ? query.where('boardId', board) : query))).map(
        (row: Record<string, any>): Card => ({
          id: Number(row.id),
          rank: row.rank ?? null,
          due:
            row.due === null
              ? null
              : new Date(Number.isFinite(Number(row.due)) ? Number(row.due) : row.due).toISOString()
        })
      )

    const sorts: Sort[] = [
      { field: 'rank', direction: 'ASC' },
      { field: 'rank', direction: 'DESC' },
      { field: 'rank', direction: 'ASC', nulls: 'NULLS_LAST' },
      { field: 'due', direction: 'DESC', nulls: 'NULLS_FIRST' }
    ]

    for (const sort of sorts) {
      const name = `${sort.field} ${sort.direction}${sort.nulls ? ` ${sort.nulls}` : ''}`

      it(`pages forward by ${name} while rows are inserted and deleted: none skipped or repeated`, async () => {
        const sorting = [sort]
        const original = await current()
        const deleted = new Set<number>()
        const inserted: Array<{ card: Card; ahead: boolean }> = []
        const seen: Card[] = []
        let after: string | undefined
        for (let round = 0; ; round++) {
          const result = await page({ sorting, paging: { first: 4, ...(after ? { after } : {}) } })
          seen.push(...result.cards)
          assert.equal(result.pageInfo.hasPreviousPage, after !== undefined)
          if (!result.pageInfo.hasNextPage) break
          after = result.pageInfo.endCursor
          const last = seen[seen.length - 1]
          // Between pages: a row deleted behind the cursor (an offset would then skip one) and one ahead
          // of it, and rows inserted on either side of it.
          const alive = (await current()).filter((card) => !seen.some((done) => done.id === card.id))
          const behind = seen.find((card) => !deleted.has(card.id))
          if (behind) {
            await env.server.db('cards').where('id', behind.id).delete()
            deleted.add(behind.id)
          }
          if (alive.length > 1) {
            await env.server
              .db('cards')
              .where('id', alive[alive.length - 1].id)
              .delete()
            deleted.add(alive[alive.length - 1].id)
          }
          for (const [rank, due] of [
            [round % 5, day(round)],
            [null, null]
          ] as const) {
            const card = await insert(1 + (round % 2), rank, due)
            inserted.push({ card, ahead: compare(sort, card, last) > 0 })
          }
          assert.ok(round < 20, 'pages end')
        }
        for (let index = 1; index < seen.length; index++) {
          assert.ok(compare(sort, seen[index - 1], seen[index]) < 0, `in order, no repeats at ${index}`)
        }
        const seenIds = new Set(seen.map((card) => card.id))
        for (const card of original) {
          if (!deleted.has(card.id)) assert.ok(seenIds.has(card.id), `card ${card.id} is not skipped`)
        }
        for (const { card, ahead } of inserted) {
          if (deleted.has(card.id)) continue
          assert.equal(seenIds.has(card.id), ahead, `card ${card.id} inserted ${ahead ? 'ahead' : 'behind'}`)
        }
      })

      it(`pages backward by ${name} from the end, and the pages join`, async () => {
        const sorting = [sort]
        const expected = (await current()).sort((a, b) => compare(sort, a, b))
        const seen: Card[] = []
        let before: string | undefined
        for (;;) {
          const result = await page({ sorting, paging: { last: 5, ...(before ? { before } : {}) } })
          seen.unshift(...result.cards)
          assert.equal(result.pageInfo.hasNextPage, before !== undefined)
          if (!result.pageInfo.hasPreviousPage) break
          before = result.pageInfo.startCursor
        }
        assert.deepEqual(
          seen.map((card) => card.id),
          expected.map((card) => card.id)
        )
        // Forward from a backward page's end cursor continues right after it.
        const middle = await page({
          sorting,
          paging: { last: 3, before: (await page({ sorting, paging: { first: 8 } })).pageInfo.endCursor }
        })
        const next = await page({ sorting, paging: { first: 2, after: middle.pageInfo.endCursor } })
        assert.deepEqual(
          [...middle.cards, ...next.cards].map((card) => card.id),
          expected.slice(4, 9).map((card) => card.id)
        )
      })
    }

    it('pages by a SQL-computed field both ways, and filters by it', async () => {
      const rows = await env.server.db('cards').select('id', 'title', 'boardId')
      const labelled = rows
        .map((row: Record<string, any>) => ({ id: Number(row.id), label: `${row.title} #${row.boardId}` }))
        .sort((a, b) => (a.label === b.label ? a.id - b.id : a.label < b.label ? 1 : -1))
      const query = `query($paging: CursorPaging, $filter: CardFilter) {
        cards(paging: $paging, filter: $filter, sorting: [{ field: label, direction: DESC }]) {
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { node { id label } } } }`
      const read = async (variables: Record<string, unknown>) => {
        const response = await graphql(env.server, query, variables)
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        return response.data.cards
      }
      const forward: Array<{ id: number; label: string }> = []
      let after: string | undefined
      for (;;) {
        const result = await read({ paging: { first: 4, ...(after ? { after } : {}) } })
        forward.push(
          ...result.edges.map((edge: any) => ({ id: Number(edge.node.id), label: edge.node.label }))
        )
        if (!result.pageInfo.hasNextPage) break
        after = result.pageInfo.endCursor
      }
      assert.deepEqual(forward, labelled)
      const backward: number[] = []
      let before: string | undefined
      for (;;) {
        const result = await read({ paging: { last: 5, ...(before ? { before } : {}) } })
        backward.unshift(...result.edges.map((edge: any) => Number(edge.node.id)))
        if (!result.pageInfo.hasPreviousPage) break
        before = result.pageInfo.startCursor
      }
      assert.deepEqual(
        backward,
        labelled.map((card) => card.id)
      )
      const filtered = await read({ filter: { label: { like: '% #2' } }, paging: { first: 10 } })
      assert.deepEqual(
        filtered.edges.map((edge: any) => edge.node.label),
        labelled.filter((card) => card.label.endsWith(' #2')).map((card) => card.label)
      )
    })

    it('keeps the filter and the caller’s authorization on every page', async () => {
      const filter = { rank: { isNot: null } }
      const headers = { 'x-hide-board': '2' }
      const seen: number[] = []
      let after: string | undefined
      for (;;) {
        const result = await page({ filter, paging: { first: 3, ...(after ? { after } : {}) } }, headers)
        seen.push(...result.cards.map((card: Card) => card.id))
        if (!result.pageInfo.hasNextPage) break
        after = result.pageInfo.endCursor
      }
      const visible = (await current(1)).filter((card) => card.rank !== null).sort((a, b) => a.id - b.id)
      assert.deepEqual(
        seen,
        visible.map((card) => card.id)
      )
    })

    it('refuses a cursor made for another sorting or filter, and a changed or foreign one, with a 400', async () => {
      const sorting = [{ field: 'rank', direction: 'ASC' }]
      const { pageInfo } = await page({ sorting, paging: { first: 3 } })
      const attempt = async (variables: Record<string, unknown>, field: string, message: RegExp) => {
        const response = await graphql(env.server, PAGE, variables)
        assert.deepEqual(codes(response), ['BAD_USER_INPUT'], JSON.stringify(variables))
        assert.equal(response.errors![0].extensions.errors![0].field, field)
        assert.match(response.errors![0].message, message)
        assert.equal(response.data, null)
      }
      const after = pageInfo.endCursor
      await attempt({ paging: { first: 3, after } }, 'paging.after', /another sorting or filter/)
      await attempt(
        { sorting: [{ field: 'rank', direction: 'DESC' }], paging: { first: 3, after } },
        'paging.after',
        /another sorting/
      )
      await attempt(
        { sorting, filter: { boardId: { eq: 1 } }, paging: { first: 3, after } },
        'paging.after',
        /or filter/
      )
      await attempt(
        { sorting, paging: { last: 3, before: after.slice(0, -4) } },
        'paging.before',
        /not a valid cursor/
      )
      await attempt(
        { sorting, paging: { first: 3, after: offsetCursor(3) } },
        'paging.after',
        /not a valid cursor/
      )
      await attempt(
        { sorting, paging: { first: 3, after: 'not base64!' } },
        'paging.after',
        /not a valid cursor/
      )
      const payload = readCursor(after)
      payload.fields[1].value += 1
      await attempt({ sorting, paging: { first: 3, after: writeCursor(payload) } }, 'paging.after', /changed/)
      // A relation's cursor is not the root's, though both list cards by rank.
      const relation = await graphql(
        env.server,
        `
          query ($after: ConnectionCursor) {
            board(id: 1) {
              cardsByKey(sorting: [{ field: rank, direction: ASC }], paging: { first: 2, after: $after }) {
                edges {
                  cursor
                }
              }
            }
          }
        `,
        { after }
      )
      assert.deepEqual(codes(relation), ['BAD_USER_INPUT'])
    })

    it('refuses to sort keyset pages by a filterOnly field, whose values cursors would carry', async () => {
      const response = await graphql(env.server, PAGE, { sorting: [{ field: 'secret', direction: 'ASC' }] })
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
      assert.equal(response.errors![0].extensions.errors![0].field, 'sorting.0.field')
      const offsetCursors = await graphql(
        env.server,
        `
          {
            board(id: 1) {
              cardsByOffset(sorting: [{ field: secret, direction: ASC }]) {
                edges {
                  cursor
                }
              }
            }
          }
        `
      )
      assert.deepEqual(codes(offsetCursors), [], 'offset cursors carry no values')
    })

    it('binds a re-signed cursor’s values as values: a wrong type is a 400, another position stays within the caller’s records', async () => {
      const sorting = [{ field: 'rank', direction: 'ASC' }]
      const { pageInfo } = await page({ sorting, paging: { first: 3 } })
      const payload = readCursor(pageInfo.endCursor)
      // The digests are not secret: a client can recompute them. The values are still only bound parameters.
      const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16)
      const resign = (fields: Array<{ field: string; value: unknown }>) =>
        writeCursor({ ...payload, fields, check: digest(`${payload.scope}|${JSON.stringify(fields)}`) })
      const injected = resign([
        { field: 'rank', value: '1 OR 1=1; DROP TABLE cards; --' },
        { field: 'id', value: 1 }
      ])
      const bad = await graphql(env.server, PAGE, { sorting, paging: { first: 3, after: injected } })
      assert.deepEqual(codes(bad), ['BAD_USER_INPUT'])
      assert.equal(bad.errors![0].extensions.errors![0].field, 'keyset.after.rank')
      const missing = await graphql(env.server, PAGE, {
        sorting,
        paging: { first: 3, after: resign([{ field: 'id', value: 1 }]) }
      })
      assert.deepEqual(codes(missing), ['BAD_USER_INPUT'])
      // The start of the order: every card after it, yet none of the hidden board's.
      const start = resign([
        { field: 'rank', value: null },
        { field: 'id', value: 0 }
      ])
      const moved = await page({ sorting, paging: { first: 10, after: start } }, { 'x-hide-board': '2' })
      assert.ok(moved.cards.length > 0)
      const board2 = new Set((await current(2)).map((card) => card.id))
      assert.ok(moved.cards.every((card: Card) => !board2.has(card.id)))
      assert.equal(
        await env.server
          .db('cards')
          .count({ n: '*' })
          .then((rows) => Number(rows[0].n)),
        17
      )
    })

    it('pages a relation by keyset per parent, both ways, in one statement whatever the page size', async () => {
      const query = `query($paging: CursorPaging) { boards(paging: { limit: 5 }) { nodes { id
        cardsByKey(paging: $paging, sorting: [{ field: rank, direction: DESC }]) {
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { node { id rank due } } } } } }`
      const expected = (await current(1)).sort((a, b) => compare({ field: 'rank', direction: 'DESC' }, a, b))
      const run = async (paging: Record<string, unknown>) => {
        const response = await graphql(env.server, query, { paging })
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        return response.data.boards.nodes[0].cardsByKey
      }
      const first = await run({ first: 5 })
      assert.deepEqual(
        first.edges.map((edge: any) => Number(edge.node.id)),
        expected.slice(0, 5).map((card) => card.id)
      )
      const second = await run({ first: 5, after: first.pageInfo.endCursor })
      assert.deepEqual(
        second.edges.map((edge: any) => Number(edge.node.id)),
        expected.slice(5, 10).map((card) => card.id)
      )
      assert.deepEqual([second.pageInfo.hasPreviousPage, second.pageInfo.hasNextPage], [true, true])
      const back = await run({ last: 2, before: second.pageInfo.startCursor })
      assert.deepEqual(
        back.edges.map((edge: any) => Number(edge.node.id)),
        expected.slice(3, 5).map((card) => card.id)
      )
      const counted = await graphql(
        env.server,
        `
          query ($after: ConnectionCursor) {
            boards(paging: { limit: 5 }) {
              nodes {
                cardsByKey(paging: { first: 2, after: $after }, sorting: [{ field: rank, direction: DESC }]) {
                  totalCount
                  edges {
                    node {
                      id
                    }
                  }
                }
              }
            }
          }
        `,
        { after: first.pageInfo.endCursor }
      )
      assert.deepEqual(
        counted.data.boards.nodes.map((board: any) => board.cardsByKey.totalCount),
        [expected.length, 3],
        'every record of the parent, not those after the cursor'
      )
      const small = await env.server.countStatements(() => run({ first: 1 }))
      const large = await env.server.countStatements(() =>
        run({ first: 10, after: first.pageInfo.endCursor })
      )
      assert.equal(small, 2)
      assert.equal(large, small)
    })

    it('reads a root keyset page in one statement, deep or not, and counts every record for totalCount', async () => {
      const { pageInfo } = await page({ paging: { first: 10 } })
      const counted = await graphql(
        env.server,
        `
          query ($after: ConnectionCursor) {
            cards(paging: { first: 2, after: $after }) {
              totalCount
            }
          }
        `,
        {
          after: pageInfo.endCursor
        }
      )
      assert.equal(counted.data.cards.totalCount, (await current()).length)
      const first = await env.server.countStatements(() => page({ paging: { first: 3 } }))
      const deep = await env.server.countStatements(() =>
        page({ paging: { first: 3, after: pageInfo.endCursor } })
      )
      assert.equal(first, 1)
      assert.equal(deep, 1)
    })
  },
  createPagingApp
)
