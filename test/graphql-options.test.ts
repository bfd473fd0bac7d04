import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { createFixtureApp, seedWidgets } from './support/fixture-app'
import { codes, compactSdl, graphql } from './support/graphql'

const WIDGETS = `query Widgets($filter: WidgetFilter!, $paging: CursorPaging, $sorting: [WidgetSort!]) {
  widgets(filter: $filter, paging: $paging, sorting: $sorting) {
    pageInfo { hasNextPage hasPreviousPage endCursor }
    edges { node { name } }
  }
}`

forEachDatabase(
  'GraphQL options: Widget (filterRequired, filterOnly, defaultSort, page sizes, soft delete) and Gadget',
  (env) => {
    beforeEach(async () => {
      const { db } = env.server
      await seedWidgets(db, { 3: { released: new Date('2026-02-01T10:00:00Z') } })
      await db('gadgets').delete()
      await db('gadgets').insert([
        { id: 'g-1', name: 'on', active: true, note: 'n' },
        { id: 'g-2', name: 'off', active: false, note: null },
        { id: 'g-3', name: 'also on', active: true, note: null }
      ])
    })

    async function names(variables: Record<string, unknown>) {
      const response = await graphql(env.server, WIDGETS, variables)
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      return response.data.widgets.edges.map((edge: any) => edge.node.name)
    }

    it('shapes the schema after the field options', () => {
      const sdl = compactSdl(env.server)
      for (const expected of [
        'widgets( paging: CursorPaging = {first: 2} filter: WidgetFilter! sorting: [WidgetSort!] = [] ): WidgetConnection!',
        'type Widget { id: ID! tenant: String! name: String! rank: Int weight: Float! released: DateTime }',
        'input WidgetFilter { and: [WidgetFilter!] or: [WidgetFilter!] id: IDFilterComparison tenant: StringFieldComparison! secret: StringFieldComparison name: StringFieldComparison rank: IntFieldComparison weight: NumberFieldComparison released: DateFieldComparison }',
        'enum WidgetSortFields { id tenant secret name rank weight released }',
        'input IntFieldComparisonBetween { lower: Int! upper: Int! }',
        'type WidgetConnection { pageInfo: PageInfo! edges: [WidgetEdge!]! }',
        'gadgets( paging: CursorPaging = {first: 10} filter: GadgetFilter = {} sorting: [GadgetSort!] = [] ): GadgetConnection!',
        'type Gadget { id: ID! name: String! active: Boolean! note: String }',
        'input GadgetFilter { and: [GadgetFilter!] or: [GadgetFilter!] id: IDFilterComparison name: StringFieldComparison active: BooleanFieldComparison }'
      ]) {
        assert.ok(sdl.includes(expected), `SDL lacks: ${expected}`)
      }
      assert.match(
        sdl,
        /input IntFieldComparison \{ is: Boolean isNot: Boolean eq: Int .* between: IntFieldComparisonBetween notBetween: IntFieldComparisonBetween \}/
      )
    })

    it('requires the filterRequired field, with at least one operator, at every level', async () => {
      const noFilter = await graphql(env.server, '{ widgets { edges { cursor } } }')
      assert.deepEqual(codes(noFilter), ['GRAPHQL_VALIDATION_FAILED'])
      const noTenant = await graphql(env.server, WIDGETS, { filter: { name: { eq: 'w1' } } })
      assert.deepEqual(codes(noTenant), ['BAD_USER_INPUT'])
      const empty = await graphql(env.server, WIDGETS, { filter: { tenant: {}, and: [{ tenant: {} }] } })
      assert.deepEqual(codes(empty), ['BAD_USER_INPUT'])
      assert.deepEqual(empty.errors![0].extensions.errors!.map((error) => error.field).sort(), [
        'filter.and.0.tenant',
        'filter.tenant'
      ])
      assert.deepEqual(await names({ filter: { tenant: { eq: 'b' } } }), ['w4'])
    })

    it('filters and sorts on filterOnly fields, which cannot be selected', async () => {
      assert.deepEqual(await names({ filter: { tenant: { eq: 'a' }, secret: { eq: 's1' } } }), ['w3', 'w1'])
      assert.deepEqual(
        await names({
          filter: { tenant: { eq: 'a' } },
          sorting: [{ field: 'secret', direction: 'DESC' }],
          paging: { first: 3 }
        }),
        ['w5', 'w2', 'w1']
      )
      const selected = await graphql(
        env.server,
        '{ widgets(filter: {tenant: {eq: "a"}}) { edges { node { secret } } } }'
      )
      assert.deepEqual(codes(selected), ['GRAPHQL_VALIDATION_FAILED'])
      assert.match(selected.errors![0].message, /Cannot query field "secret" on type "Widget"/)
    })

    it('orders by defaultSort, pages with defaultResultSize and refuses more than maxResultsSize', async () => {
      const first = await graphql(env.server, WIDGETS, { filter: { tenant: { eq: 'a' } } })
      assert.deepEqual(
        first.data.widgets.edges.map((edge: any) => edge.node.name),
        ['w3', 'w1']
      )
      assert.equal(first.data.widgets.pageInfo.hasNextPage, true)
      const after = first.data.widgets.pageInfo.endCursor
      assert.deepEqual(await names({ filter: { tenant: { eq: 'a' } }, paging: { first: 3, after } }), [
        'w5',
        'w2'
      ])
      const tooMany = await graphql(env.server, WIDGETS, {
        filter: { tenant: { eq: 'a' } },
        paging: { first: 4 }
      })
      assert.deepEqual(tooMany.errors![0].extensions.errors, [
        { field: 'paging.first', message: 'must be between 1 and 3' }
      ])
      const sorted = await names({
        filter: { tenant: { eq: 'a' } },
        sorting: [{ field: 'released', direction: 'ASC', nulls: 'NULLS_LAST' }],
        paging: { first: 3 }
      })
      assert.deepEqual(sorted, ['w3', 'w1', 'w2'])
    })

    it('compares integers, nullable numbers and dates', async () => {
      const a = { tenant: { eq: 'a' } }
      const paging = { first: 3 }
      assert.deepEqual(await names({ filter: { ...a, rank: { between: { lower: 2, upper: 4 } } }, paging }), [
        'w1',
        'w5'
      ])
      assert.deepEqual(await names({ filter: { ...a, rank: { is: null } }, paging }), ['w2'])
      assert.deepEqual(await names({ filter: { ...a, rank: { gt: 2 } }, paging }), ['w3'])
      assert.deepEqual(await names({ filter: { ...a, rank: { notIn: [2] } }, paging }), ['w3'])
      assert.deepEqual(await names({ filter: { ...a, weight: { gte: 1.5, lt: 3 } }, paging }), ['w1', 'w2'])
      assert.deepEqual(await names({ filter: { ...a, released: { gt: '2026-02-15T00:00:00Z' } }, paging }), [
        'w1'
      ])
      const fraction = await graphql(env.server, WIDGETS, { filter: { ...a, rank: { eq: 2.5 } } })
      assert.deepEqual(codes(fraction), ['BAD_USER_INPUT'])
    })

    it('leaves soft-deleted records out of every query', async () => {
      assert.equal((await env.server.http('DELETE', '/widgets/3/archive')).status, 200)
      assert.deepEqual(await names({ filter: { tenant: { eq: 'a' } } }), ['w1', 'w5'])
      const single = await graphql(env.server, '{ widget(id: "3") { name } }')
      assert.deepEqual(single.data, { widget: null })
      assert.deepEqual(codes(single), ['NOT_FOUND'])
    })

    it('applies defaultFilter to collections (not to single records), with string ids', async () => {
      const response = await graphql(
        env.server,
        `
          {
            gadgets {
              edges {
                node {
                  id
                  name
                  active
                  note
                }
              }
            }
            off: gadget(id: "g-2") {
              id
              name
              active
            }
            filtered: gadgets(filter: { or: [{ active: { is: false } }, { id: { eq: "g-3" } }] }) {
              edges {
                node {
                  id
                }
              }
            }
          }
        `
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.deepEqual(
        response.data.gadgets.edges.map((edge: any) => edge.node),
        [
          { id: 'g-1', name: 'on', active: true, note: 'n' },
          { id: 'g-3', name: 'also on', active: true, note: null }
        ]
      )
      assert.deepEqual(response.data.off, { id: 'g-2', name: 'off', active: false })
      assert.deepEqual(
        response.data.filtered.edges,
        [{ node: { id: 'g-3' } }],
        'defaultFilter is ANDed, not replaced'
      )
      const count = await graphql(env.server, '{ gadgets { totalCount } }')
      assert.deepEqual(codes(count), ['GRAPHQL_VALIDATION_FAILED'], 'totalCount only with enableTotalCount')
    })
  },
  createFixtureApp
)
