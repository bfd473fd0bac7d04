import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import { forEachDatabase } from './support/server'
import { clearTables, seedTodoItems, type TodoSeed } from './support/seed'
import { codes, compactSdl, graphql } from './support/graphql'

const ITEMS: TodoSeed[] = [
  { title: 'Buy milk', completed: false, priority: 1, created: '2026-01-01T10:00:00.000Z', createdBy: 'ann' },
  {
    title: 'Answer mail',
    completed: true,
    priority: 2.5,
    created: '2026-01-03T08:30:00.000Z',
    createdBy: 'bob'
  },
  {
    title: 'Write docs',
    completed: false,
    priority: 4,
    created: '2026-01-02T00:00:00.000Z',
    createdBy: null
  },
  { title: 'Call Bob', completed: true, priority: 1, created: '2026-01-02T12:00:00.000Z', createdBy: 'ann' },
  { title: 'Plan trip', completed: false, priority: 2, created: '2026-01-05T09:15:00.000Z', createdBy: 'bob' }
]

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

forEachDatabase('GraphQL: root aggregate queries', (env) => {
  let ids: number[]
  const calls: Array<{ provider?: string; user?: unknown }> = []

  before(async () => {
    await clearTables(env.server.db)
    ids = await seedTodoItems(env.server.db, ITEMS)
    env.server.app.service('todo-items').hooks({
      before: {
        all: [
          (context: HookContext) => {
            if (context.method !== 'aggregate') return
            calls.push({ provider: context.params.provider, user: context.params.headers?.['user-name'] })
          }
        ]
      }
    })
  })

  const query = async (document: string, variables?: Record<string, unknown>) => {
    const response = await graphql(env.server, document, variables)
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    return response.data
  }

  it('has the aggregate queries and types of the specification', () => {
    // The specification's types; group keys of to-one relations' records follow the own fields (issue 42).
    const sdl = compactSdl(env.server)
    for (const expected of [
      'todoItemAggregate( filter: TodoItemAggregateFilter having: TodoItemAggregateHaving sorting: [TodoItemAggregateSort!] paging: AggregatePaging ): [TodoItemAggregateResponse!]!',
      'subTasksAggregate( filter: SubTaskAggregateFilter having: SubTaskAggregateHaving sorting: [SubTaskAggregateSort!] paging: AggregatePaging ): [TodoItemSubTasksAggregateResponse!]!',
      'type TodoItemAggregateResponse { groupBy: TodoItemAggregateGroupBy count: TodoItemCountAggregate countDistinct: TodoItemCountDistinctAggregate sum: TodoItemSumAggregate avg: TodoItemAvgAggregate min: TodoItemMinAggregate max: TodoItemMaxAggregate stddevPop: TodoItemStddevPopAggregate stddevSamp: TodoItemStddevSampAggregate varPop: TodoItemVarPopAggregate varSamp: TodoItemVarSampAggregate median: TodoItemMedianAggregate percentile( p: Float! ): TodoItemPercentileAggregate running: TodoItemAggregateRunning previous: TodoItemAggregatePeriod periodAgo( period: GroupBy! ): TodoItemAggregatePeriod }',
      'type TodoItemAggregateGroupBy { id: ID title: String description: String completed: Boolean created( by: GroupBy = DAY timeZone: String = "UTC" fill: GroupFill ): DateTime updated( by: GroupBy = DAY timeZone: String = "UTC" fill: GroupFill ): DateTime priority: Float subTasksCount: Int createdBy: String updatedBy: String }',
      'type TodoItemCountAggregate { id: Int title: Int description: Int completed: Int created: Int updated: Int priority: Int subTasksCount: Int }',
      'type TodoItemSumAggregate { id: Float priority: Float subTasksCount: Float }',
      'type TodoItemAvgAggregate { id: Float priority: Float subTasksCount: Float }',
      'type TodoItemMinAggregate { id: ID title: String description: String created: DateTime updated: DateTime priority: Float subTasksCount: Int }',
      'type TodoItemMaxAggregate { id: ID title: String description: String created: DateTime updated: DateTime priority: Float subTasksCount: Int }',
      'enum GroupBy { HOUR DAY WEEK MONTH QUARTER YEAR }',
      'input TodoItemAggregateFilter { and: [TodoItemAggregateFilter!] or: [TodoItemAggregateFilter!] id: IDFilterComparison title: StringFieldComparison description: StringFieldComparison completed: BooleanFieldComparison created: DateFieldComparison updated: DateFieldComparison priority: NumberFieldComparison subTasksCount: IntFieldComparison subTasks: SubTaskFilter subTasksNone: SubTaskFilter subTasksEvery: SubTaskFilter tags: TagFilter tagsNone: TagFilter tagsEvery: TagFilter }',
      'type TodoItemSubTasksAggregateResponse { groupBy: TodoItemSubTasksAggregateGroupBy count: TodoItemSubTasksCountAggregate countDistinct: TodoItemSubTasksCountDistinctAggregate sum: TodoItemSubTasksSumAggregate avg: TodoItemSubTasksAvgAggregate min: TodoItemSubTasksMinAggregate max: TodoItemSubTasksMaxAggregate stddevPop: TodoItemSubTasksStddevPopAggregate stddevSamp: TodoItemSubTasksStddevSampAggregate varPop: TodoItemSubTasksVarPopAggregate varSamp: TodoItemSubTasksVarSampAggregate median: TodoItemSubTasksMedianAggregate percentile( p: Float! ): TodoItemSubTasksPercentileAggregate running: TodoItemSubTasksAggregateRunning previous: TodoItemSubTasksAggregatePeriod periodAgo( period: GroupBy! ): TodoItemSubTasksAggregatePeriod }',
      'type TodoItemSubTasksAggregateGroupBy { id: ID title: String description: String completed: Boolean created( by: GroupBy = DAY timeZone: String = "UTC" ): DateTime updated( by: GroupBy = DAY timeZone: String = "UTC" ): DateTime todoItemId: String createdBy: String updatedBy: String todoItem: TodoItemRelatedGroupBy }',
      'type TodoItemSubTasksCountAggregate { id: Int title: Int description: Int completed: Int created: Int updated: Int todoItemId: Int }',
      'type TodoItemSubTasksSumAggregate { id: Float }',
      'type TodoItemSubTasksAvgAggregate { id: Float }',
      'type TodoItemSubTasksMinAggregate { id: ID title: String description: String created: DateTime updated: DateTime todoItemId: String }',
      'type TodoItemSubTasksMaxAggregate { id: ID title: String description: String created: DateTime updated: DateTime todoItemId: String }',
      'input SubTaskAggregateFilter { and: [SubTaskAggregateFilter!] or: [SubTaskAggregateFilter!] id: IDFilterComparison title: StringFieldComparison description: StringFieldComparison completed: BooleanFieldComparison created: DateFieldComparison updated: DateFieldComparison todoItemId: StringFieldComparison todoItem: TodoItemFilter }'
    ]) {
      assert.ok(sdl.includes(expected), `SDL lacks: ${expected}`)
    }
  })

  it('computes count, sum, avg, min and max of every type in one statement, through the service', async () => {
    calls.length = 0
    let data: any
    const statements = await env.server.countStatements(async () => {
      const response = await graphql(
        env.server,
        `
          {
            todoItemAggregate {
              count {
                id
                title
                description
                completed
                created
                updated
                priority
              }
              sum {
                id
                priority
              }
              avg {
                id
                priority
              }
              min {
                id
                title
                description
                created
                updated
                priority
              }
              max {
                id
                title
                description
                created
                updated
                priority
              }
            }
          }
        `,
        undefined,
        { 'user-name': 'carol' }
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      data = response.data
    })
    assert.equal(statements, 1)
    assert.deepEqual(calls, [{ provider: 'graphql', user: 'carol' }])
    const priorities = ITEMS.map((item) => item.priority!)
    assert.deepEqual(data.todoItemAggregate, [
      {
        // Every description is null: count counts non-null values only.
        count: { id: 5, title: 5, description: 0, completed: 5, created: 5, updated: 5, priority: 5 },
        sum: { id: sum(ids), priority: sum(priorities) },
        avg: { id: sum(ids) / 5, priority: sum(priorities) / 5 },
        min: {
          id: String(ids[0]),
          title: 'Answer mail',
          description: null,
          created: '2026-01-01T10:00:00.000Z',
          updated: '2026-01-01T10:00:00.000Z',
          priority: 1
        },
        max: {
          id: String(ids[4]),
          title: 'Write docs',
          description: null,
          created: '2026-01-05T09:15:00.000Z',
          updated: '2026-01-05T09:15:00.000Z',
          priority: 4
        }
      }
    ])
  })

  it('aggregates only the records matching the filter', async () => {
    const data = await query(`{
      todoItemAggregate(filter: {completed: {is: false}}) { count { id } sum { priority } max { title } }
    }`)
    assert.deepEqual(data.todoItemAggregate, [
      { count: { id: 3 }, sum: { priority: 7 }, max: { title: 'Write docs' } }
    ])

    const nested = await query(
      `query ($filter: TodoItemAggregateFilter) { todoItemAggregate(filter: $filter) { count { id } avg { priority } } }`,
      {
        filter: {
          or: [
            { title: { iLike: '%MAIL%' } },
            { and: [{ priority: { gte: 2, lte: 4 } }, { completed: { is: false } }] }
          ]
        }
      }
    )
    assert.deepEqual(nested.todoItemAggregate, [{ count: { id: 3 }, avg: { priority: (2.5 + 4 + 2) / 3 } }])
  })

  it('answers an empty set with one entry of zero counts and nulls, or no groups', async () => {
    const data = await query(`{
      none: todoItemAggregate(filter: {title: {eq: "nothing"}}) {
        count { id description } sum { priority } avg { id } min { title created } max { id }
      }
      noGroups: todoItemAggregate(filter: {title: {eq: "nothing"}}) { groupBy { completed } count { id } }
    }`)
    assert.deepEqual(data.none, [
      {
        count: { id: 0, description: 0 },
        sum: { priority: null },
        avg: { id: null },
        min: { title: null, created: null },
        max: { id: null }
      }
    ])
    assert.deepEqual(data.noGroups, [])
  })

  it('groups by one and by several fields, ordered by the group values', async () => {
    const data = await query(`{
      one: todoItemAggregate { groupBy { completed } count { id } sum { priority } }
      several: todoItemAggregate { groupBy { completed priority } count { id } min { title } }
      audit: todoItemAggregate { groupBy { createdBy } count { id } }
      reversed: todoItemAggregate { groupBy { priority completed } count { id } }
    }`)
    assert.deepEqual(data.one, [
      { groupBy: { completed: false }, count: { id: 3 }, sum: { priority: 7 } },
      { groupBy: { completed: true }, count: { id: 2 }, sum: { priority: 3.5 } }
    ])
    assert.deepEqual(data.several, [
      { groupBy: { completed: false, priority: 1 }, count: { id: 1 }, min: { title: 'Buy milk' } },
      { groupBy: { completed: false, priority: 2 }, count: { id: 1 }, min: { title: 'Plan trip' } },
      { groupBy: { completed: false, priority: 4 }, count: { id: 1 }, min: { title: 'Write docs' } },
      { groupBy: { completed: true, priority: 1 }, count: { id: 1 }, min: { title: 'Call Bob' } },
      { groupBy: { completed: true, priority: 2.5 }, count: { id: 1 }, min: { title: 'Answer mail' } }
    ])
    // The audit column is a groupBy key only; nulls come first.
    assert.deepEqual(data.audit, [
      { groupBy: { createdBy: null }, count: { id: 1 } },
      { groupBy: { createdBy: 'ann' }, count: { id: 2 } },
      { groupBy: { createdBy: 'bob' }, count: { id: 2 } }
    ])
    // The order of the selection is the order of the groups.
    assert.deepEqual(
      data.reversed.map((entry: any) => [entry.groupBy.priority, entry.groupBy.completed]),
      [
        [1, false],
        [1, true],
        [2, false],
        [2.5, true],
        [4, false]
      ]
    )
  })

  it('computes only what is selected, through aliases, fragments and @include', async () => {
    let data: any
    const [sql] = await env.server.recordStatements(async () => {
      data = await query(
        `query ($withMax: Boolean!) {
          stats: todoItemAggregate(filter: {completed: {is: true}}) {
            ...Counts
            ... on TodoItemAggregateResponse { lowest: min { first: title } }
            highest: max @include(if: $withMax) { title }
            total: sum @skip(if: true) { priority }
            __typename
          }
        }
        fragment Counts on TodoItemAggregateResponse {
          groupBy { ... on TodoItemAggregateGroupBy { day: created(by: DAY) } }
          count { n: id ids: id }
        }`,
        { withMax: false }
      )
    })
    assert.deepEqual(data.stats, [
      {
        groupBy: { day: '2026-01-02T00:00:00.000Z' },
        count: { n: 1, ids: 1 },
        lowest: { first: 'Call Bob' },
        __typename: 'TodoItemAggregateResponse'
      },
      {
        groupBy: { day: '2026-01-03T00:00:00.000Z' },
        count: { n: 1, ids: 1 },
        lowest: { first: 'Answer mail' },
        __typename: 'TodoItemAggregateResponse'
      }
    ])
    assert.match(sql, /COUNT\(/i)
    assert.match(sql, /MIN\(/i)
    assert.doesNotMatch(sql, /MAX\(|SUM\(|AVG\(/i, 'skipped and excluded members are not computed')
  })

  it('refuses queries it cannot answer with codes, never an internal error', async () => {
    const nothing = await graphql(env.server, '{ todoItemAggregate { __typename } }')
    assert.deepEqual(codes(nothing), ['BAD_USER_INPUT'])
    assert.match(nothing.errors![0].message, /No aggregate fields selected/)
    assert.equal(nothing.data, null)

    const emptyMembers = await graphql(
      env.server,
      '{ todoItemAggregate { count { __typename } groupBy { __typename } } }'
    )
    assert.deepEqual(codes(emptyMembers), ['BAD_USER_INPUT'])

    const twoBuckets = await graphql(
      env.server,
      '{ todoItemAggregate { groupBy { week: created(by: WEEK) month: created(by: MONTH) } count { id } } }'
    )
    assert.deepEqual(codes(twoBuckets), ['BAD_USER_INPUT'])
    assert.deepEqual(
      twoBuckets.errors![0].extensions.errors!.map((error: any) => error.field),
      ['groupBy.created']
    )

    const badFilter = await graphql(
      env.server,
      'query ($filter: TodoItemAggregateFilter) { todoItemAggregate(filter: $filter) { count { id } } }',
      { filter: { or: [{ completed: { is: true } }, { id: { eq: 'abc' } }] } }
    )
    assert.deepEqual(codes(badFilter), ['BAD_USER_INPUT'])
    assert.deepEqual(
      badFilter.errors![0].extensions.errors!.map((error: any) => error.field),
      ['or.1.id.eq']
    )

    const badVariable = await graphql(
      env.server,
      'query ($by: GroupBy) { todoItemAggregate { groupBy { created(by: $by) } count { id } } }',
      { by: 'MINUTE' }
    )
    assert.deepEqual(codes(badVariable), ['BAD_USER_INPUT'])

    for (const document of [
      '{ todoItemAggregate { sum { title } } }',
      '{ todoItemAggregate { min { completed } } }',
      '{ todoItemAggregate { count { age } } }',
      '{ todoItemAggregate { count { createdBy } } }',
      '{ todoItemAggregate { groupBy { created(by: MINUTE) } } }',
      '{ todoItemAggregate(filter: {age: {gt: 1}}) { count { id } } }',
      '{ todoItemAggregate(filter: {created: {gt: "yesterday"}}) { count { id } } }',
      '{ todoItemAggregate { count } }'
    ]) {
      const response = await graphql(env.server, document)
      assert.deepEqual(codes(response), ['GRAPHQL_VALIDATION_FAILED'], document)
    }
  })
})

/**
 * Records on both sides of each bucket boundary. 2026-03-01 is a Sunday: it belongs to the ISO week that
 * started on Monday 2026-02-23, the record of 2026-03-02 to the next one. The week of 2025-12-29 spans the
 * turn of the year.
 */
const BOUNDARIES: TodoSeed[] = [
  { title: 'old year, last day', created: '2025-12-31T23:59:59.999Z' },
  { title: 'new year, first day', created: '2026-01-01T00:00:00.000Z' },
  { title: 'end of February', created: '2026-02-28T23:59:59.999Z' },
  { title: 'Sunday, first of March', created: '2026-03-01T23:30:00.000Z' },
  { title: 'Monday, midnight', created: '2026-03-02T00:00:00.000Z' },
  { title: 'Monday, evening', created: '2026-03-02T21:00:00.000Z' }
]

forEachDatabase('GraphQL: date buckets', (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(env.server.db, BOUNDARIES)
  })

  const buckets = async (by: string | null) => {
    const argument = by === null ? '' : `(by: ${by})`
    const response = await graphql(
      env.server,
      `{ todoItemAggregate { groupBy { created${argument} } count { id } min { title } } }`
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    return response.data.todoItemAggregate.map((entry: any) => [entry.groupBy.created, entry.count.id])
  }

  it('groups by DAY by default and on request', async () => {
    const days = [
      ['2025-12-31T00:00:00.000Z', 1],
      ['2026-01-01T00:00:00.000Z', 1],
      ['2026-02-28T00:00:00.000Z', 1],
      ['2026-03-01T00:00:00.000Z', 1],
      ['2026-03-02T00:00:00.000Z', 2]
    ]
    assert.deepEqual(await buckets('DAY'), days)
    assert.deepEqual(await buckets(null), days)
  })

  it('groups by ISO WEEK from Monday, also across the turn of the year', async () => {
    assert.deepEqual(await buckets('WEEK'), [
      ['2025-12-29T00:00:00.000Z', 2],
      ['2026-02-23T00:00:00.000Z', 2],
      ['2026-03-02T00:00:00.000Z', 2]
    ])
  })

  it('groups by MONTH and YEAR', async () => {
    assert.deepEqual(await buckets('MONTH'), [
      ['2025-12-01T00:00:00.000Z', 1],
      ['2026-01-01T00:00:00.000Z', 1],
      ['2026-02-01T00:00:00.000Z', 1],
      ['2026-03-01T00:00:00.000Z', 3]
    ])
    assert.deepEqual(await buckets('YEAR'), [
      ['2025-01-01T00:00:00.000Z', 1],
      ['2026-01-01T00:00:00.000Z', 5]
    ])
  })

  it('takes the bucket from a variable, groups two dates at once and keeps the same bucket under two aliases', async () => {
    const response = await graphql(
      env.server,
      `
        query ($by: GroupBy) {
          todoItemAggregate(filter: { created: { gte: "2026-02-01T00:00:00.000Z" } }) {
            groupBy {
              month: created(by: $by)
              again: created(by: MONTH)
              updated(by: YEAR)
              completed
            }
            count {
              id
            }
            max {
              created
            }
          }
        }
      `,
      { by: 'MONTH' }
    )
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.deepEqual(response.data.todoItemAggregate, [
      {
        groupBy: {
          month: '2026-02-01T00:00:00.000Z',
          again: '2026-02-01T00:00:00.000Z',
          updated: '2026-01-01T00:00:00.000Z',
          completed: false
        },
        count: { id: 1 },
        max: { created: '2026-02-28T23:59:59.999Z' }
      },
      {
        groupBy: {
          month: '2026-03-01T00:00:00.000Z',
          again: '2026-03-01T00:00:00.000Z',
          updated: '2026-01-01T00:00:00.000Z',
          completed: false
        },
        count: { id: 3 },
        max: { created: '2026-03-02T21:00:00.000Z' }
      }
    ])
  })
})
