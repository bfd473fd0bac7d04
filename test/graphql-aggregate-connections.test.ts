import assert from 'node:assert/strict'
import type { Knex } from 'knex'
import { defineResource } from '../src'
import { forEachDatabase, type AppFactory } from './support/server'
import {
  aggregateFixtureResources,
  bookResource,
  createAggregateFixtureApp,
  entryResource,
  libraryResource,
  reviewResource,
  tagResource
} from './support/aggregate-fixture-app'
import { codes, compactSdl, graphql, graphqlCounted } from './support/graphql'
import { clearTables, seedLinks, seedTags, seedTodoItems } from './support/seed'

/** A book of the fixture: `tenant` (authorize), `available` (defaultFilter) and `deleted` (soft delete). */
interface Book {
  id: number
  libraryId: number
  price: number
  pages: number | null
  published: string | null
  available: boolean
  tenant: string
  shelf: string | null
  deleted: boolean
}

const BOOKS: Book[] = [
  [1, 1, 100, '2026-01-05', true, 'acme', 'A', false],
  [2, 1, null, '2026-01-20', true, 'acme', 'B', false],
  [3, 1, 300, '2026-02-03', true, 'other', 'A', false],
  [4, 1, 400, '2026-02-10', false, 'acme', 'A', false],
  [5, 2, 500, '2026-02-14', true, 'acme', 'B', false],
  [6, 2, 600, '2026-03-01', true, 'acme', 'A', true],
  [7, 2, 700, '2026-03-09', true, 'acme', null, false],
  [8, 3, 800, '2026-03-30', true, 'other', 'B', false],
  [9, 3, 900, null, true, 'acme', 'A', false],
  [10, 1, 1000, '2026-01-31', true, 'acme', 'B', false],
  [11, 1, 1100, '2026-03-15', true, 'acme', 'A', false],
  [12, 2, 1200, '2026-02-28', true, 'acme', 'C', false]
].map(([id, libraryId, pages, day, available, tenant, shelf, deleted]) => ({
  id: id as number,
  libraryId: libraryId as number,
  price: (id as number) + 0.5,
  pages: pages as number | null,
  published: day === null ? null : `${day}T12:00:00.000Z`,
  available: available as boolean,
  tenant: tenant as string,
  shelf: shelf as string | null,
  deleted: deleted as boolean
}))

const LIBRARIES = [1, 2, 3, 4]

/** What a caller of `tenant` may read: its own, available (defaultFilter), not soft-deleted books. */
const visibleTo = (tenant: string) =>
  BOOKS.filter((book) => book.tenant === tenant && book.available && !book.deleted)

/** The aggregates the queries below select, computed over `books`. */
function totals(books: Book[]) {
  const pages = books.map((book) => book.pages).filter((value) => value !== null)
  const published = books.map((book) => book.published).filter((value) => value !== null)
  return {
    count: { id: books.length },
    sum: { price: books.length ? books.reduce((sum, book) => sum + book.price, 0) : null },
    min: { pages: pages.length ? Math.min(...pages) : null },
    max: { published: published.length ? published.sort().at(-1) : null }
  }
}
const TOTALS = 'count { id } sum { price } min { pages } max { published }'

/** The number of books per key, as `[{groupBy: {name: key}, count: {id}}]` in a stable order. */
function groups(books: Book[], name: string, keyOf: (book: Book) => string | null) {
  const counts = new Map<string | null, number>()
  for (const book of books) counts.set(keyOf(book), (counts.get(keyOf(book)) ?? 0) + 1)
  return sortGroups([...counts].map(([key, id]) => ({ groupBy: { [name]: key }, count: { id } })))
}
const sortGroups = (list: unknown[]) =>
  [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))

const monthOf = (book: Book) => book.published && `${book.published.slice(0, 7)}-01T00:00:00.000Z`

const ACME = { 'x-tenant': 'acme' }
const OTHER = { 'x-tenant': 'other' }

/**
 * The fixture's resources paged every other way: Library by offsets with its books by keyset cursors
 * (`books`) and by offsets (`booksPaged`), Book by keyset cursors at the root.
 */
const otherPagings: AppFactory = (databaseUrl) =>
  createAggregateFixtureApp(databaseUrl, [
    defineResource({
      ...libraryResource,
      graphql: { pagingStrategy: 'offset' },
      many: {
        books: { resource: 'Book', foreignKey: 'libraryId', keyset: true },
        booksPaged: { resource: 'Book', foreignKey: 'libraryId', pagingStrategy: 'offset' },
        bookList: { resource: 'Book', foreignKey: 'libraryId', pagingStrategy: 'none' }
      }
    }),
    defineResource({ ...bookResource, graphql: { keyset: true } }),
    reviewResource,
    tagResource,
    entryResource
  ])

async function seed(db: Knex) {
  await db('libraries').insert(LIBRARIES.map((id) => ({ id, name: `Library ${id}` })))
  await db('books').insert(
    BOOKS.map(({ deleted, published, ...book }) => ({
      ...book,
      title: `Book ${book.id}`,
      published: published && new Date(published),
      deletedAt: deleted ? new Date() : null
    }))
  )
}

const variants = [
  { name: 'cursor connections', factory: createAggregateFixtureApp as AppFactory, libraries: 'cursor' },
  { name: 'offset and keyset connections', factory: otherPagings, libraries: 'offset' }
] as const

for (const variant of variants) {
  const offsetLibraries = variant.libraries === 'offset'
  // A page of libraries and where its records are, by Library's paging strategy.
  const libraryPage = (size: number) => (offsetLibraries ? `{limit: ${size}}` : `{first: ${size}}`)
  const records = (inner: string) => (offsetLibraries ? `nodes { ${inner} }` : `edges { node { ${inner} } }`)
  const relations = offsetLibraries ? ['books', 'booksPaged'] : ['books']
  const nodesOf = (connection: any) =>
    offsetLibraries ? connection.nodes : connection.edges.map((edge: any) => edge.node)

  forEachDatabase(
    `GraphQL: aggregate beside a connection's page (${variant.name})`,
    (env) => {
      before(async () => {
        await seed(env.server.db)
      })

      it('answers the aggregate of all records of the filter, not the page, as the aggregate query does', async () => {
        const filter = '{price: {gt: 2}}'
        const { data, statements } = await graphqlCounted(
          env.server,
          `{
              books(filter: ${filter}, sorting: [{field: price, direction: DESC}], paging: {first: 2}) {
                edges { node { id } }
                aggregate { ${TOTALS} }
                shelves: aggregate(sorting: [{field: shelf, direction: DESC}], paging: {limit: 2}) {
                  groupBy { shelf } count { id }
                }
              }
              bookAggregate(filter: ${filter}) { ${TOTALS} }
            }`,
          { headers: ACME }
        )
        const matching = visibleTo('acme').filter((book) => book.price > 2)
        const byPrice = [...matching].sort((a, b) => b.price - a.price)
        assert.deepEqual(
          data.books.edges.map((edge: any) => Number(edge.node.id)),
          byPrice.slice(0, 2).map((book) => book.id)
        )
        assert.ok(matching.length > 2, 'more records match than the page holds')
        assert.deepEqual(data.books.aggregate, [totals(matching)])
        assert.deepEqual(data.books.aggregate, data.bookAggregate)
        // Shelves C, B (descending, nulls apart), two of them.
        assert.deepEqual(data.books.shelves, [
          { groupBy: { shelf: 'C' }, count: { id: matching.filter((book) => book.shelf === 'C').length } },
          { groupBy: { shelf: 'B' }, count: { id: matching.filter((book) => book.shelf === 'B').length } }
        ])
        // The page, each alias of the aggregate, the aggregate query: one statement each.
        assert.equal(statements, 4)
      })

      it('runs nothing for an aggregate not selected', async () => {
        const { statements } = await graphqlCounted(env.server, '{ books { edges { node { id } } } }', {
          headers: ACME
        })
        assert.equal(statements, 1)
      })

      it('groups by a date bucket', async () => {
        const response = await graphql(
          env.server,
          `
            {
              books(paging: { first: 1 }) {
                aggregate {
                  groupBy {
                    published(by: MONTH)
                  }
                  count {
                    id
                  }
                }
              }
            }
          `,
          {},
          ACME
        )
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        assert.deepEqual(
          sortGroups(response.data.books.aggregate),
          groups(visibleTo('acme'), 'published', monthOf)
        )
      })

      it('answers only what the caller may read (authorize, defaultFilter, soft delete)', async () => {
        for (const [headers, tenant] of [
          [ACME, 'acme'],
          [OTHER, 'other']
        ] as const) {
          const response = await graphql(
            env.server,
            `{ books { aggregate { ${TOTALS} } }
               libraries(paging: ${libraryPage(10)}) {
                 ${records(`id ${relations.map((name) => `${name} { aggregate { count { id } } }`).join(' ')}`)}
               } }`,
            {},
            headers
          )
          assert.equal(response.errors, undefined, JSON.stringify(response.errors))
          assert.deepEqual(response.data.books.aggregate, [totals(visibleTo(tenant))])
          for (const library of nodesOf(response.data.libraries)) {
            const own = visibleTo(tenant).filter((book) => book.libraryId === Number(library.id))
            for (const name of relations) {
              assert.deepEqual(library[name].aggregate, [{ count: { id: own.length } }], `${tenant} ${name}`)
            }
          }
        }
      })

      for (const relation of relations) {
        it(`aggregates each parent's ${relation} beside its page, all parents in one statement`, async () => {
          const query = (size: number) => `{
            libraries(paging: ${libraryPage(size)}) {
              ${records(`id
                ${relation}(filter: {price: {gt: 2}}, paging: ${relation === 'booksPaged' ? '{limit: 1}' : '{first: 1}'}) {
                  ${relation === 'booksPaged' ? 'nodes { id }' : 'edges { node { id } }'}
                  aggregate { ${TOTALS} }
                  byShelf: aggregate { groupBy { shelf } count { id } }
                }`)}
            }
          }`
          const counts: number[] = []
          for (const size of [2, LIBRARIES.length]) {
            let response: any
            counts.push(
              await env.server.countStatements(async () => {
                response = await graphql(env.server, query(size), {}, ACME)
              })
            )
            assert.equal(response.errors, undefined, JSON.stringify(response.errors))
            const libraries = nodesOf(response.data.libraries)
            assert.deepEqual(
              libraries.map((library: any) => Number(library.id)),
              LIBRARIES.slice(0, size)
            )
            for (const library of libraries) {
              const own = visibleTo('acme').filter(
                (book) => book.libraryId === Number(library.id) && book.price > 2
              )
              const connection = library[relation]
              const page = relation === 'booksPaged' ? connection.nodes : connection.edges
              assert.equal(page.length, Math.min(own.length, 1))
              assert.deepEqual(connection.aggregate, [totals(own)], `library ${library.id}`)
              assert.deepEqual(
                sortGroups(connection.byShelf),
                groups(own, 'shelf', (book) => book.shelf)
              )
            }
          }
          // Libraries, their books, each alias of the aggregate: whatever the number of libraries.
          assert.deepEqual(counts, [4, 4])
        })
      }

      it('offers the aggregate only where the aggregates are on, and never a filter of its own', async () => {
        const sdl = compactSdl(env.server)
        const typeOf = (name: string) => sdl.match(new RegExp(`type ${name} \\{[^}]*\\}`))![0]
        const bookConnection = typeOf('BookConnection')
        assert.ok(
          bookConnection.includes(
            'aggregate( having: BookAggregateHaving sorting: [BookAggregateSort!] paging: AggregatePaging ): ' +
              '[BookAggregateResponse!]!'
          ),
          bookConnection
        )
        assert.match(typeOf('LibraryBooksConnection'), /aggregate\(.*\): \[LibraryBooksAggregateResponse!\]!/)
        // Library.archive opts out of aggregates; a NONE list is a list, with no field beside its records.
        if (!offsetLibraries) assert.doesNotMatch(typeOf('LibraryArchiveConnection'), /aggregate/)
        else
          assert.match(
            sdl,
            / bookList\( filter: BookFilter = \{\} sorting: \[BookSort!\] = \[\] \): \[Book!\]! /
          )
        const refused = await graphql(
          env.server,
          '{ books { aggregate(filter: {price: {gt: 2}}) { count { id } } } }',
          {},
          ACME
        )
        assert.deepEqual(codes(refused), ['GRAPHQL_VALIDATION_FAILED'])
      })

      it('refuses bad aggregate arguments with a 400 naming the path', async () => {
        const twoBuckets = await graphql(
          env.server,
          '{ books { aggregate { groupBy { m: published(by: MONTH) y: published(by: YEAR) } count { id } } } }',
          {},
          ACME
        )
        assert.deepEqual(codes(twoBuckets), ['BAD_USER_INPUT'])
        assert.equal(twoBuckets.errors![0].extensions.errors![0].field, 'groupBy.published')
        const badPage = await graphql(
          env.server,
          '{ books { aggregate(paging: {offset: -1}) { count { id } } } }',
          {},
          ACME
        )
        assert.deepEqual(codes(badPage), ['BAD_USER_INPUT'])
        assert.match(JSON.stringify(badPage.errors![0].extensions.errors), /paging\.offset/)
      })
    },
    variant.factory
  )
}

forEachDatabase(
  'GraphQL: aggregate beside a connection, within the limits',
  (env) => {
    before(async () => {
      await seed(env.server.db)
    })

    it('counts a relation connection’s aggregate once per batch of parents, not per record of the page', async () => {
      // Book's maxGroups of 2 makes 2 parents a batch of its relation aggregates.
      const query = (libraries: number) => `{ libraries(paging: {first: ${libraries}}) { edges { node {
          books(paging: {first: 10}) { aggregate { count { id } } }
        } } } }`
      // Libraries, their books, the books' aggregates: 3 statements, not one per 2 of 2 × 10 records.
      const within = await graphql(env.server, query(2), {}, ACME)
      assert.equal(within.errors, undefined, JSON.stringify(within.errors))
      const beyond = await graphql(env.server, query(4), {}, ACME)
      assert.deepEqual(codes(beyond), ['QUERY_TOO_COMPLEX'])
      assert.equal((beyond.errors![0].extensions as any).statements, 4)
    })

    it('refuses, before running anything, more aggregates than the statements allowed', async () => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(
          env.server,
          `
            {
              books {
                a: aggregate {
                  count {
                    id
                  }
                }
                b: aggregate(paging: { limit: 1 }) {
                  count {
                    id
                  }
                }
                c: aggregate(paging: { limit: 2 }) {
                  count {
                    id
                  }
                }
              }
            }
          `,
          {},
          ACME
        )
      })
      assert.deepEqual(codes(response), ['QUERY_TOO_COMPLEX'])
      assert.equal(response.errors[0].extensions.statements, 4)
      assert.equal(statements, 0)
    })

    it('refuses a grouping beyond the resource’s maxGroups as the aggregate query does', async () => {
      const response = await graphql(
        env.server,
        '{ books { aggregate { groupBy { shelf } count { id } } } }',
        {},
        ACME
      )
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
      assert.equal(response.errors![0].extensions.errors![0].field, 'groupBy')
      const root = await graphql(env.server, '{ bookAggregate { groupBy { shelf } count { id } } }', {}, ACME)
      assert.deepEqual(root.errors![0].extensions, response.errors![0].extensions)
    })
  },
  (databaseUrl) =>
    createAggregateFixtureApp(
      databaseUrl,
      aggregateFixtureResources.map((resource) =>
        resource === bookResource
          ? defineResource({ ...bookResource, aggregate: { enabled: true, maxGroups: 2 } })
          : resource
      ),
      { graphql: { limits: { maxStatements: 3 } } }
    )
)

forEachDatabase('GraphQL: aggregate beside a many-to-many connection', (env) => {
  it('aggregates each parent’s linked records, as the relation aggregate does, in one statement', async () => {
    await clearTables(env.server.db)
    const items = await seedTodoItems(env.server.db, [{ title: 'one' }, { title: 'two' }, { title: 'three' }])
    const tags = await seedTags(env.server.db, ['t0', 't1', 't2', 't3'])
    const links: Array<[number, number]> = [
      [items[0], tags[0]],
      [items[0], tags[1]],
      [items[0], tags[2]],
      [items[1], tags[1]],
      [items[1], tags[3]]
    ]
    await seedLinks(env.server.db, links)
    let response: any
    const statements = await env.server.countStatements(async () => {
      const tagsOf = '{name: {neq: "t1"}}'
      response = await graphql(
        env.server,
        `{ todoItems(sorting: [{field: id, direction: ASC}]) { edges { node { id
            tags(filter: ${tagsOf}, paging: {first: 1}) {
              edges { node { name } }
              aggregate { count { id } max { name } }
            }
            tagsAggregate(filter: ${tagsOf}) { count { id } max { name } }
          } } } }`
      )
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    for (const [index, edge] of response.data.todoItems.edges.entries()) {
      const names = links
        .filter(([item]) => item === items[index])
        .map(([, tag]) => `t${tags.indexOf(tag)}`)
        .filter((name) => name !== 't1')
      assert.deepEqual(edge.node.tags.aggregate, [
        { count: { id: names.length }, max: { name: names.length ? names.sort().at(-1) : null } }
      ])
      assert.deepEqual(edge.node.tags.aggregate, edge.node.tagsAggregate)
    }
    // The items, their tags' pages, and the aggregates: the one beside the page and the relation aggregate
    // ask the same, through the same loader, and share one statement.
    assert.equal(statements, 3)
  })
})
