import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import {
  ConfigurationError,
  defineResource,
  feathersQuery,
  FilterableField,
  IDField,
  type ResourceService
} from '../src'
import { createAggregateFixtureApp } from './support/aggregate-fixture-app'
import { forEachDatabase } from './support/server'
import { codes, compactSdl, graphql } from './support/graphql'

const ACME = { 'x-tenant': 'acme' }

forEachDatabase(
  'GraphQL: aggregate switches, field types and scope',
  (env) => {
    let sdl: string

    before(async () => {
      sdl = compactSdl(env.server)
      await env.server.db('libraries').insert([
        { id: 1, name: 'North' },
        { id: 2, name: 'South' },
        { id: 3, name: 'Empty' }
      ])
      const book = (id: number, libraryId: number, extra: Record<string, unknown>) => ({
        id,
        libraryId,
        title: `Book ${id}`,
        pages: 100 * id,
        price: id + 0.5,
        published: new Date(Date.UTC(2026, 0, id)),
        available: true,
        tenant: 'acme',
        shelf: id % 2 ? 'odd' : 'even',
        deletedAt: null,
        ...extra
      })
      await env.server
        .db('books')
        .insert([
          book(1, 1, {}),
          book(2, 1, { pages: null, published: null }),
          book(3, 1, { tenant: 'other' }),
          book(4, 1, { available: false }),
          book(5, 2, {}),
          book(6, 2, { deletedAt: new Date() }),
          book(7, 2, { shelf: null })
        ])
      await env.server.db('tags').insert([
        { id: 'b', label: 'beta', pinned: true },
        { id: 'a', label: 'alpha', pinned: false },
        { id: 'c', label: 'gamma', pinned: true }
      ])
    })

    it('has the root query with enableAggregate or aggregate.enabled, and nothing without', async () => {
      assert.ok(
        sdl.includes(
          'libraryAggregate( filter: LibraryAggregateFilter having: LibraryAggregateHaving sorting: [LibraryAggregateSort!] paging: AggregatePaging ): [LibraryAggregateResponse!]!'
        )
      )
      assert.ok(
        sdl.includes(
          'bookAggregate( filter: BookAggregateFilter having: BookAggregateHaving sorting: [BookAggregateSort!] paging: AggregatePaging ): [BookAggregateResponse!]!'
        )
      )
      assert.ok(
        sdl.includes(
          'tagAggregate( filter: TagAggregateFilter having: TagAggregateHaving sorting: [TagAggregateSort!] paging: AggregatePaging ): [TagAggregateResponse!]!'
        )
      )
      assert.doesNotMatch(sdl, /reviewAggregate|ReviewAggregate/)
      const response = await graphql(env.server, '{ reviewAggregate { count { id } } }')
      assert.deepEqual(codes(response), ['GRAPHQL_VALIDATION_FAILED'])
    })

    it('has relation aggregates with enableAggregate only, except where the relation opts out', async () => {
      assert.ok(
        sdl.includes(
          'booksAggregate( filter: BookAggregateFilter having: BookAggregateHaving sorting: [BookAggregateSort!] paging: AggregatePaging ): [LibraryBooksAggregateResponse!]!'
        ),
        'Library.books'
      )
      assert.doesNotMatch(sdl, /archiveAggregate|LibraryArchiveAggregate/, 'Library.archive opts out')
      assert.doesNotMatch(
        sdl,
        /reviewsAggregate|BookReviewsAggregate/,
        'aggregate.enabled is the root query only'
      )
      for (const document of [
        '{ libraries { edges { node { archiveAggregate { count { id } } } } } }',
        '{ books { edges { node { reviewsAggregate { count { id } } } } } }'
      ]) {
        const response = await graphql(env.server, document, undefined, ACME)
        assert.deepEqual(codes(response), ['GRAPHQL_VALIDATION_FAILED'], document)
      }
    })

    it('types each member after the fields: own types, Float sums, no booleans in min/max', () => {
      for (const expected of [
        'type BookAggregateResponse { groupBy: BookAggregateGroupBy count: BookCountAggregate countDistinct: BookCountDistinctAggregate sum: BookSumAggregate avg: BookAvgAggregate min: BookMinAggregate max: BookMaxAggregate stddevPop: BookStddevPopAggregate stddevSamp: BookStddevSampAggregate varPop: BookVarPopAggregate varSamp: BookVarSampAggregate median: BookMedianAggregate percentile( p: Float! ): BookPercentileAggregate running: BookAggregateRunning previous: BookAggregatePeriod periodAgo( period: GroupBy! ): BookAggregatePeriod }',
        'type BookAggregateGroupBy { id: ID libraryId: Int title: String pages: Int price: Float published( by: GroupBy = DAY timeZone: String = "UTC" fill: GroupFill ): DateTime available: Boolean shelf: String }',
        'type BookCountAggregate { id: Int libraryId: Int title: Int pages: Int price: Int published: Int available: Int tenant: Int }',
        'type BookSumAggregate { id: Float libraryId: Float pages: Float price: Float }',
        'type BookAvgAggregate { id: Float libraryId: Float pages: Float price: Float }',
        'type BookMinAggregate { id: ID libraryId: Int title: String pages: Int price: Float published: DateTime }',
        'type BookMaxAggregate { id: ID libraryId: Int title: String pages: Int price: Float published: DateTime }',
        // A filterOnly field (tenant) is counted, never returned: no group key, min or max of it.
        // Relation group keys have no `by`, as in nestjs-query.
        'type LibraryBooksAggregateGroupBy { id: ID libraryId: Int title: String pages: Int price: Float published( by: GroupBy = DAY timeZone: String = "UTC" ): DateTime available: Boolean shelf: String }',
        'type LibraryBooksMinAggregate { id: ID libraryId: Int title: String pages: Int price: Float published: DateTime }',
        // No numeric field (a string id): no sum, no avg.
        'type TagAggregateResponse { groupBy: TagAggregateGroupBy count: TagCountAggregate countDistinct: TagCountDistinctAggregate min: TagMinAggregate max: TagMaxAggregate }',
        'type TagMinAggregate { id: ID label: String }',
        'enum GroupBy { HOUR DAY WEEK MONTH QUARTER YEAR }',
        'input BookAggregateFilter { and: [BookAggregateFilter!] or: [BookAggregateFilter!] id: IDFilterComparison libraryId: IntFieldComparison title: StringFieldComparison pages: IntFieldComparison price: NumberFieldComparison published: DateFieldComparison available: BooleanFieldComparison tenant: StringFieldComparison }'
      ]) {
        assert.ok(sdl.includes(expected), `SDL lacks: ${expected}`)
      }
      assert.doesNotMatch(sdl, /TagSumAggregate|TagAvgAggregate/)
    })

    it('runs the guards, authorize, defaultFilter and soft delete of the aggregated resource', async () => {
      const document = `{
        bookAggregate {
          count { id pages published }
          sum { pages price }
          avg { pages }
          min { id title published }
          max { id pages published }
        }
      }`
      const anonymous = await graphql(env.server, document)
      assert.deepEqual(codes(anonymous), ['UNAUTHENTICATED'])

      // Visible to acme: 1, 2 (null pages and date), 5 and 7; not 3 (other tenant), 4 (unavailable), 6 (deleted).
      const response = await graphql(env.server, document, undefined, ACME)
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.deepEqual(response.data.bookAggregate, [
        {
          count: { id: 4, pages: 3, published: 3 },
          sum: { pages: 1300, price: 1.5 + 2.5 + 5.5 + 7.5 },
          avg: { pages: 1300 / 3 },
          min: { id: '1', title: 'Book 1', published: '2026-01-01T00:00:00.000Z' },
          max: { id: '7', pages: 700, published: '2026-01-07T00:00:00.000Z' }
        }
      ])

      // A client filter on a filterOnly field narrows further but cannot widen the scope.
      const other = await graphql(
        env.server,
        '{ bookAggregate(filter: {or: [{tenant: {eq: "other"}}, {available: {is: false}}]}) { count { id } } }',
        undefined,
        ACME
      )
      assert.deepEqual(other.data.bookAggregate, [{ count: { id: 0 } }])

      const grouped = await graphql(
        env.server,
        '{ bookAggregate { groupBy { shelf published(by: YEAR) } count { id } } }',
        undefined,
        ACME
      )
      assert.deepEqual(grouped.data.bookAggregate, [
        { groupBy: { shelf: null, published: '2026-01-01T00:00:00.000Z' }, count: { id: 1 } },
        { groupBy: { shelf: 'even', published: null }, count: { id: 1 } },
        { groupBy: { shelf: 'odd', published: '2026-01-01T00:00:00.000Z' }, count: { id: 2 } }
      ])
    })

    it('groups records without a date under null, by every bucket and in every time zone', async () => {
      // The tenant's books were published at midnight UTC on these days of 2026, one has no date.
      const utc = (...days: string[]) => days.map((day) => `${day}T00:00:00.000Z`)
      const berlin = (...days: string[]) => days.map((day) => `${day}T23:00:00.000Z`)
      const expected: Record<string, string[]> = {
        'HOUR UTC': utc('2026-01-01', '2026-01-05', '2026-01-07'),
        'HOUR Europe/Berlin': utc('2026-01-01', '2026-01-05', '2026-01-07'),
        'DAY UTC': utc('2026-01-01', '2026-01-05', '2026-01-07'),
        'DAY Europe/Berlin': berlin('2025-12-31', '2026-01-04', '2026-01-06'),
        'WEEK UTC': utc('2025-12-29', '2026-01-05'),
        'WEEK Europe/Berlin': berlin('2025-12-28', '2026-01-04'),
        'MONTH UTC': utc('2026-01-01'),
        'MONTH Europe/Berlin': berlin('2025-12-31'),
        'QUARTER UTC': utc('2026-01-01'),
        'QUARTER Europe/Berlin': berlin('2025-12-31'),
        'YEAR UTC': utc('2026-01-01'),
        'YEAR Europe/Berlin': berlin('2025-12-31')
      }
      for (const [at, starts] of Object.entries(expected)) {
        const [by, timeZone] = at.split(' ')
        const grouped = await graphql(
          env.server,
          `{ bookAggregate { groupBy { published(by: ${by}, timeZone: "${timeZone}") } count { id } } }`,
          undefined,
          ACME
        )
        assert.equal(grouped.errors, undefined, JSON.stringify(grouped.errors))
        const groups = grouped.data.bookAggregate.map((entry: any) => entry.groupBy.published)
        assert.deepEqual(groups, [null, ...starts], at)
      }
    })

    it('scopes relation aggregates the same way, every parent in one statement', async () => {
      const document = `{
        libraries { edges { node { name
          booksAggregate { count { id } sum { price } max { title } }
        } } }
      }`
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(env.server, document, undefined, ACME)
      })
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.equal(statements, 2)
      assert.deepEqual(
        response.data.libraries.edges.map((edge: any) => [edge.node.name, edge.node.booksAggregate]),
        [
          ['North', [{ count: { id: 2 }, sum: { price: 4 }, max: { title: 'Book 2' } }]],
          ['South', [{ count: { id: 2 }, sum: { price: 13 }, max: { title: 'Book 7' } }]],
          ['Empty', [{ count: { id: 0 }, sum: { price: null }, max: { title: null } }]]
        ]
      )
      const anonymous = await graphql(env.server, document)
      assert.deepEqual(codes(anonymous), ['UNAUTHENTICATED'])
    })

    it('never returns a filterOnly field: no group key, min, max, sum or avg, only its count', async () => {
      for (const document of [
        '{ bookAggregate { groupBy { tenant } count { id } } }',
        '{ bookAggregate { min { tenant } } }',
        '{ bookAggregate { max { tenant } } }',
        '{ libraries { edges { node { booksAggregate { groupBy { tenant } } } } } }'
      ]) {
        const response = await graphql(env.server, document, undefined, ACME)
        assert.deepEqual(codes(response), ['GRAPHQL_VALIDATION_FAILED'], document)
      }
      const counted = await graphql(env.server, '{ bookAggregate { count { tenant } } }', undefined, ACME)
      assert.deepEqual(counted.data, { bookAggregate: [{ count: { tenant: 4 } }] })

      // The service's own check, for calls that do not come through the GraphQL schema.
      const service = env.server.app.service('books') as unknown as ResourceService
      const request = {
        groupBy: [{ field: 'tenant' }],
        min: ['tenant'],
        max: ['tenant'],
        sum: ['tenant'],
        avg: ['tenant']
      }
      await assert.rejects(service.aggregate(request, { headers: ACME }), (error: any) => {
        assert.equal(error.code, 400)
        assert.deepEqual(
          error.errors.map((entry: { field: string }) => entry.field),
          ['groupBy.0.field', 'sum.0', 'avg.0', 'min.0', 'max.0']
        )
        assert.match(error.errors[0].message, /filterOnly/)
        return true
      })
    })

    it('requires the aggregate filter when a field is filterRequired, with an operator', async () => {
      assert.ok(
        sdl.includes(
          'entryAggregate( filter: EntryAggregateFilter! having: EntryAggregateHaving sorting: [EntryAggregateSort!] paging: AggregatePaging ): [EntryAggregateResponse!]!'
        )
      )
      assert.ok(sdl.includes('account: StringFieldComparison! amount: NumberFieldComparison }'))
      await env.server.db('entries').insert([
        { account: 'a', amount: 2 },
        { account: 'a', amount: 3 },
        { account: 'b', amount: 7 }
      ])
      const missing = await graphql(env.server, '{ entryAggregate { sum { amount } } }')
      assert.deepEqual(codes(missing), ['GRAPHQL_VALIDATION_FAILED'])
      const empty = await graphql(env.server, '{ entryAggregate(filter: {account: {}}) { sum { amount } } }')
      assert.deepEqual(codes(empty), ['BAD_USER_INPUT'])
      const response = await graphql(
        env.server,
        '{ entryAggregate(filter: {account: {eq: "a"}}) { sum { amount } } }'
      )
      assert.deepEqual(response.data, { entryAggregate: [{ sum: { amount: 5 } }] })
    })

    it('aggregates string ids and booleans', async () => {
      const response = await graphql(
        env.server,
        '{ tagAggregate { groupBy { pinned } count { id pinned } min { id label } max { id label } } }'
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.deepEqual(response.data.tagAggregate, [
        {
          groupBy: { pinned: false },
          count: { id: 1, pinned: 1 },
          min: { id: 'a', label: 'alpha' },
          max: { id: 'a', label: 'alpha' }
        },
        {
          groupBy: { pinned: true },
          count: { id: 2, pinned: 2 },
          min: { id: 'b', label: 'beta' },
          max: { id: 'c', label: 'gamma' }
        }
      ])
    })
  },
  createAggregateFixtureApp
)

describe('GraphQL: aggregate field names', () => {
  it('refuses at start-up a relation aggregate whose name a field already has', async () => {
    const db = knex({
      client: 'better-sqlite3',
      connection: { filename: ':memory:' },
      useNullAsDefault: true
    })
    const shelf = defineResource({
      name: 'Shelf',
      schema: Type.Object({ id: IDField(Type.Integer()), booksAggregate: FilterableField(Type.Integer()) }),
      many: { books: { resource: 'Volume', foreignKey: 'shelfId' } },
      enableAggregate: true
    })
    const volume = defineResource({
      name: 'Volume',
      schema: Type.Object({ id: IDField(Type.Integer()), shelfId: FilterableField(Type.Integer()) })
    })
    try {
      await assert.rejects(
        () =>
          koa(feathers())
            .configure(feathersQuery({ Model: db, resources: [shelf, volume] }))
            .setup(),
        (error: Error) => error instanceof ConfigurationError && /Shelf\.booksAggregate/.test(error.message)
      )
    } finally {
      await db.destroy()
    }
  })
})
