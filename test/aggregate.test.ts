import { BadRequest } from '@feathersjs/errors'
import assert from 'node:assert/strict'
import knex, { type Knex } from 'knex'
import { Type } from '@sinclair/typebox'
import { knexConfig } from '../example/database'
import {
  defineResource,
  FilterableField,
  IDField,
  type AggregateRequest,
  type ResourceParams,
  type ResourceService
} from '../src'
import { createFixtureApp, seedWidgets } from './support/fixture-app'
import { clearTables, seedTodoItems } from './support/seed'
import { forEachDatabase, type TestServer } from './support/server'
import { pluginApp } from './support/plugin-app'

/** A request answered with a plain list of responses. */
type Unpartitioned = Omit<AggregateRequest, 'partitionBy'>

const serviceOf = (server: TestServer, path: string) => server.app.service(path) as unknown as ResourceService

async function seedSubTasks(
  db: Knex,
  tasks: Array<{ todoItemId: number; title: string; completed?: boolean }>
) {
  const created = new Date('2026-01-01T00:00:00.000Z')
  const rows = tasks.map((task) => ({ completed: false, ...task, created, updated: created }))
  await db('sub_tasks').insert(rows)
}

/** Expects a BadRequest whose `errors` name exactly `fields`. */
async function rejects(work: Promise<unknown>, fields: string[], label: string) {
  await assert.rejects(work, (error: BadRequest & { errors?: Array<{ field: string }> }) => {
    assert.ok(error instanceof BadRequest, `${label}: ${error}`)
    assert.deepEqual(
      error.errors?.map((entry: { field: string }) => entry.field),
      fields,
      label
    )
    return true
  })
}

forEachDatabase('Aggregates: TodoItem functions, filters and groups', (env) => {
  const aggregate = (request: Unpartitioned, params: ResourceParams = {}) =>
    serviceOf(env.server, 'todo-items').aggregate(request, params)

  beforeEach(() => clearTables(env.server.db))

  it('counts non-null values and computes sum, avg, min and max of every kind in one statement', async () => {
    const ids = await seedTodoItems(env.server.db, [
      { title: 'Buy milk', completed: false, priority: 1, created: '2026-01-01T10:00:00.000Z' },
      { title: 'Answer mail', completed: true, priority: 2.5, created: '2026-01-03T08:30:00.000Z' },
      { title: 'Write docs', completed: false, priority: 4, created: '2026-01-02T00:00:00.000Z' }
    ])
    const request: Unpartitioned = {
      count: ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority'],
      sum: ['id', 'priority'],
      avg: ['id', 'priority'],
      min: ['id', 'title', 'description', 'created', 'priority'],
      max: ['id', 'title', 'description', 'created', 'priority']
    }
    let result: unknown
    const statements = await env.server.countStatements(async () => {
      result = await aggregate(request)
    })
    assert.equal(statements, 1)
    const idSum = ids[0] + ids[1] + ids[2]
    assert.deepEqual(result, [
      {
        count: { id: 3, title: 3, description: 0, completed: 3, created: 3, updated: 3, priority: 3 },
        sum: { id: idSum, priority: 7.5 },
        avg: { id: idSum / 3, priority: 2.5 },
        min: {
          id: ids[0],
          title: 'Answer mail',
          description: null,
          created: '2026-01-01T10:00:00.000Z',
          priority: 1
        },
        max: {
          id: ids[2],
          title: 'Write docs',
          description: null,
          created: '2026-01-03T08:30:00.000Z',
          priority: 4
        }
      }
    ])
  })

  it('aggregates an empty set to one entry of zero counts and nulls, and honours the filter', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'a', completed: true, priority: 1 },
      { title: 'b', completed: false, priority: 2 },
      { title: 'c', completed: false, priority: 3 }
    ])
    const request: Unpartitioned = { count: ['id'], sum: ['priority'], avg: ['priority'], min: ['title'] }
    assert.deepEqual(
      await aggregate(request, { queryModel: true, query: { filter: { priority: { gt: 10 } } } }),
      [{ count: { id: 0 }, sum: { priority: null }, avg: { priority: null }, min: { title: null } }]
    )
    assert.deepEqual(
      await aggregate(request, { queryModel: true, query: { filter: { completed: { is: false } } } }),
      [{ count: { id: 2 }, sum: { priority: 5 }, avg: { priority: 2.5 }, min: { title: 'b' } }]
    )
    const either = { or: [{ title: { eq: 'a' } }, { priority: { gte: 3 } }] }
    assert.deepEqual(await aggregate({ count: ['id'] }, { queryModel: true, query: { filter: either } }), [
      { count: { id: 2 } }
    ])
    assert.deepEqual(
      await aggregate(
        { groupBy: [{ field: 'completed' }] },
        { queryModel: true, query: { filter: { id: { eq: 0 } } } }
      ),
      []
    )
  })

  it('groups by one and by several fields, ordered ascending with false before true and nulls first', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'a', completed: true, priority: 1, description: 'x', createdBy: 'ann' },
      { title: 'b', completed: false, priority: 2, description: null, createdBy: 'bob' },
      { title: 'c', completed: false, priority: 1, description: 'x', createdBy: null },
      { title: 'd', completed: true, priority: 1, description: 'y', createdBy: 'ann' },
      { title: 'e', completed: false, priority: 2, description: null, createdBy: 'bob' }
    ])
    assert.deepEqual(await aggregate({ groupBy: [{ field: 'completed' }], count: ['id'] }), [
      { groupBy: { completed: false }, count: { id: 3 } },
      { groupBy: { completed: true }, count: { id: 2 } }
    ])
    assert.deepEqual(
      await aggregate({
        groupBy: [{ field: 'completed' }, { field: 'priority' }],
        count: ['id'],
        sum: ['priority']
      }),
      [
        { groupBy: { completed: false, priority: 1 }, count: { id: 1 }, sum: { priority: 1 } },
        { groupBy: { completed: false, priority: 2 }, count: { id: 2 }, sum: { priority: 4 } },
        { groupBy: { completed: true, priority: 1 }, count: { id: 2 }, sum: { priority: 2 } }
      ]
    )
    assert.deepEqual(await aggregate({ groupBy: [{ field: 'description' }], count: ['description'] }), [
      { groupBy: { description: null }, count: { description: 0 } },
      { groupBy: { description: 'x' }, count: { description: 2 } },
      { groupBy: { description: 'y' }, count: { description: 1 } }
    ])
    // The hidden audit column is a groupBy key although it is neither filterable nor serialized.
    assert.deepEqual(await aggregate({ groupBy: [{ field: 'createdBy' }], max: ['title'] }), [
      { groupBy: { createdBy: null }, max: { title: 'c' } },
      { groupBy: { createdBy: 'ann' }, max: { title: 'd' } },
      { groupBy: { createdBy: 'bob' }, max: { title: 'e' } }
    ])
    assert.deepEqual(
      await aggregate(
        { groupBy: [{ field: 'completed' }] },
        { queryModel: true, query: { filter: { priority: { eq: 1 } } } }
      ),
      [{ groupBy: { completed: false } }, { groupBy: { completed: true } }]
    )
  })

  it('groups dates into DAY, WEEK (Monday), MONTH and YEAR buckets at 00:00 UTC', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'pre-epoch Wednesday', created: '1969-12-31T23:59:59.500Z' },
      { title: 'new year eve Wednesday', created: '2025-12-31T23:59:59.999Z' },
      { title: 'Sunday late', created: '2026-01-04T23:59:59.999Z' },
      { title: 'Monday early', created: '2026-01-05T00:00:00.000Z' },
      { title: 'Monday late', created: '2026-01-05T23:59:59.999Z' },
      { title: 'next Sunday', created: '2026-01-11T12:00:00.000Z' },
      { title: 'January last Saturday', created: '2026-01-31T23:59:59.999Z' },
      { title: 'February first Sunday', created: '2026-02-01T00:00:00.000Z' }
    ])
    const buckets = async (group: AggregateRequest['groupBy']) => {
      const responses = await aggregate({ groupBy: group, count: ['id'] })
      return responses.map((response) => [response.groupBy!.created, response.count!.id])
    }
    const days = [
      ['1969-12-31T00:00:00.000Z', 1],
      ['2025-12-31T00:00:00.000Z', 1],
      ['2026-01-04T00:00:00.000Z', 1],
      ['2026-01-05T00:00:00.000Z', 2],
      ['2026-01-11T00:00:00.000Z', 1],
      ['2026-01-31T00:00:00.000Z', 1],
      ['2026-02-01T00:00:00.000Z', 1]
    ]
    assert.deepEqual(await buckets([{ field: 'created', by: 'DAY' }]), days)
    assert.deepEqual(await buckets([{ field: 'created' }]), days, 'DAY is the default')
    assert.deepEqual(await buckets([{ field: 'created', by: 'WEEK' }]), [
      ['1969-12-29T00:00:00.000Z', 1],
      ['2025-12-29T00:00:00.000Z', 2],
      ['2026-01-05T00:00:00.000Z', 3],
      ['2026-01-26T00:00:00.000Z', 2]
    ])
    assert.deepEqual(await buckets([{ field: 'created', by: 'MONTH' }]), [
      ['1969-12-01T00:00:00.000Z', 1],
      ['2025-12-01T00:00:00.000Z', 1],
      ['2026-01-01T00:00:00.000Z', 5],
      ['2026-02-01T00:00:00.000Z', 1]
    ])
    assert.deepEqual(await buckets([{ field: 'created', by: 'YEAR' }]), [
      ['1969-01-01T00:00:00.000Z', 1],
      ['2025-01-01T00:00:00.000Z', 1],
      ['2026-01-01T00:00:00.000Z', 6]
    ])
    assert.deepEqual(
      await aggregate({
        groupBy: [{ field: 'updated', by: 'YEAR' }, { field: 'completed' }],
        min: ['created']
      }),
      [
        {
          groupBy: { updated: '1969-01-01T00:00:00.000Z', completed: false },
          min: { created: '1969-12-31T23:59:59.500Z' }
        },
        {
          groupBy: { updated: '2025-01-01T00:00:00.000Z', completed: false },
          min: { created: '2025-12-31T23:59:59.999Z' }
        },
        {
          groupBy: { updated: '2026-01-01T00:00:00.000Z', completed: false },
          min: { created: '2026-01-04T23:59:59.999Z' }
        }
      ]
    )
  })

  it('refuses a sum or average beyond what a double holds as out of range, on every database', async () => {
    await seedTodoItems(env.server.db, [
      { title: 'a', priority: 1e308 },
      { title: 'b', priority: 1e308 },
      { title: 'c', priority: -1 }
    ])
    // SQLite answered Infinity (a 500 over GraphQL, which has no Infinity) and MariaDB 0.
    for (const fn of ['sum', 'avg'] as const) {
      await rejects(aggregate({ [fn]: ['priority'] }), [`${fn}.priority`], fn)
      const grouped = aggregate({ groupBy: [{ field: 'completed' }], [fn]: ['priority'] })
      await rejects(grouped, [`${fn}.priority`], fn)
    }
    const one = { queryModel: true, query: { filter: { title: { in: ['a', 'c'] } } } }
    assert.deepEqual(await aggregate({ sum: ['priority'], avg: ['priority'] }, one), [
      { sum: { priority: 1e308 - 1 }, avg: { priority: (1e308 - 1) / 2 } }
    ])
    const response = await env.server.http('POST', '/graphql', {
      query: '{ todoItemAggregate { count { id } sum { priority } } }'
    })
    assert.deepEqual(response.body.errors?.[0].extensions, {
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'sum.priority', message: 'is out of range: beyond ±1.7976931348623157e+308' }]
    })
  })

  it('refuses requests it cannot compute with a BadRequest naming each entry', async () => {
    const cases: Array<[AggregateRequest, string[]]> = [
      [{ count: ['nope'] }, ['count.0']],
      [{ count: ['id`) FROM todo_items; --'] }, ['count.0']],
      [{ sum: ['title'] }, ['sum.0']],
      [{ avg: ['completed'] }, ['avg.0']],
      [{ min: ['completed'] }, ['min.0']],
      [{ max: ['id', 'age'] }, ['max.1']],
      [{ count: ['createdBy'] }, ['count.0']],
      [{ groupBy: [{ field: 'title', by: 'WEEK' }] }, ['groupBy.0.by']],
      [{ groupBy: [{ field: 'created', by: 'MINUTE' as 'DAY' }] }, ['groupBy.0.by']],
      [{ groupBy: [{ field: 'age' }], sum: ['title'] }, ['groupBy.0.field', 'sum.0']],
      [{ groupBy: [{ field: 'completed' }, { field: 'completed' }] }, ['groupBy.1.field']],
      [{ count: ['id'], partitionBy: 'nope' }, ['partitionBy']],
      [{ count: ['id'], having: 1 } as AggregateRequest, ['having']],
      [{ count: 'id' as unknown as string[] }, ['count']],
      [{}, ['aggregate']],
      [{ count: [], groupBy: [] }, ['aggregate']]
    ]
    const todoItems = serviceOf(env.server, 'todo-items')
    for (const [request, fields] of cases) {
      await rejects(todoItems.aggregate(request), fields, JSON.stringify(request))
    }
    await assert.rejects(aggregate({}), { message: 'No aggregate fields selected' })
    await rejects(
      aggregate({ count: ['id'] }, { queryModel: true, query: { filter: { age: { eq: 1 } } } }),
      ['age'],
      'filter'
    )
  })
})

forEachDatabase('Aggregates: SubTask relation aggregates partitioned by parent', (env) => {
  let parents: number[] = []
  before(async () => {
    await clearTables(env.server.db)
    parents = await seedTodoItems(env.server.db, [{ title: 'one' }, { title: 'two' }, { title: 'three' }])
    await seedSubTasks(env.server.db, [
      { todoItemId: parents[0], title: 'a', completed: true },
      { todoItemId: parents[0], title: 'b' },
      { todoItemId: parents[0], title: 'c', completed: true },
      { todoItemId: parents[1], title: 'd' }
    ])
  })

  const inParents = () => ({
    queryModel: true,
    query: { filter: { todoItemId: { in: parents.map(String) } } }
  })

  it('aggregates many parents in one statement, with what a parent without sub-tasks gets', async () => {
    const subTasks = serviceOf(env.server, 'sub-tasks')
    let result: unknown
    const statements = await env.server.countStatements(async () => {
      result = await subTasks.aggregate(
        { partitionBy: 'todoItemId', count: ['id'], max: ['title'] },
        inParents()
      )
    })
    assert.equal(statements, 1)
    // todoItemId is a String field in the spec, so keys are strings like every value of the field.
    assert.deepEqual(result, {
      partitions: [
        { key: String(parents[0]), responses: [{ count: { id: 3 }, max: { title: 'c' } }] },
        { key: String(parents[1]), responses: [{ count: { id: 1 }, max: { title: 'd' } }] }
      ],
      empty: [{ count: { id: 0 }, max: { title: null } }]
    })
  })

  it('groups within each partition and applies the filter to every parent', async () => {
    const subTasks = serviceOf(env.server, 'sub-tasks')
    const grouped = await subTasks.aggregate(
      { partitionBy: 'todoItemId', groupBy: [{ field: 'completed' }], count: ['id'], min: ['todoItemId'] },
      inParents()
    )
    assert.deepEqual(grouped, {
      partitions: [
        {
          key: String(parents[0]),
          responses: [
            { groupBy: { completed: false }, count: { id: 1 }, min: { todoItemId: String(parents[0]) } },
            { groupBy: { completed: true }, count: { id: 2 }, min: { todoItemId: String(parents[0]) } }
          ]
        },
        {
          key: String(parents[1]),
          responses: [
            { groupBy: { completed: false }, count: { id: 1 }, min: { todoItemId: String(parents[1]) } }
          ]
        }
      ],
      empty: []
    })
    const filter = { and: [inParents().query.filter, { completed: { is: true } }] }
    const completed = await subTasks.aggregate(
      { partitionBy: 'todoItemId', count: ['id'] },
      { queryModel: true, query: { filter } }
    )
    assert.deepEqual(completed.partitions, [{ key: String(parents[0]), responses: [{ count: { id: 2 } }] }])
    const ids: Array<{ id: number; todoItemId: number }> = await env.server
      .db('sub_tasks')
      .select('id', 'todoItemId')
    const idSum = (parent: number) =>
      ids.reduce((sum, row) => sum + (row.todoItemId === parent ? row.id : 0), 0)
    assert.deepEqual(
      await subTasks.aggregate({ groupBy: [{ field: 'todoItemId' }], sum: ['id'] }, inParents()),
      [
        { groupBy: { todoItemId: String(parents[0]) }, sum: { id: idSum(parents[0]) } },
        { groupBy: { todoItemId: String(parents[1]) }, sum: { id: idSum(parents[1]) } }
      ]
    )
  })
})

forEachDatabase(
  'Aggregates: nulls, soft delete, scope, defaultFilter and transactions (Widget, Gadget)',
  (env) => {
    const widgets = () => serviceOf(env.server, 'widgets')

    beforeEach(async () => {
      const { db } = env.server
      await seedWidgets(db, {
        1: { secret: 's', rank: 1 },
        2: { secret: 's' },
        3: { secret: 's', rank: 2, released: new Date('2026-03-02T00:00:00Z') },
        4: { secret: 's' },
        5: { secret: 's', rank: 5 }
      })
    })

    it('skips nulls in every function, averages in floating point and groups nulls first', async () => {
      const all = await widgets().aggregate({
        count: ['rank', 'released'],
        sum: ['rank', 'weight'],
        avg: ['rank'],
        min: ['rank', 'released'],
        max: ['rank', 'released']
      })
      assert.deepEqual(all, [
        {
          count: { rank: 4, released: 2 },
          sum: { rank: 10, weight: 8.5 },
          avg: { rank: 2.5 },
          min: { rank: 1, released: '2026-03-01T10:00:00.000Z' },
          max: { rank: 5, released: '2026-03-02T00:00:00.000Z' }
        }
      ])
      // MySQL would answer 1.6667 (a 4-place DECIMAL) for an integer column without the floating-point average.
      const thirds = await widgets().aggregate(
        { avg: ['rank'] },
        { queryModel: true, query: { filter: { id: { in: [1, 3, 4] } } } }
      )
      assert.deepEqual(thirds, [{ avg: { rank: 5 / 3 } }])
      const onlyNull = await widgets().aggregate(
        { count: ['rank'], sum: ['rank'], avg: ['rank'], min: ['released'], max: ['rank'] },
        { queryModel: true, query: { filter: { id: { eq: 2 } } } }
      )
      assert.deepEqual(onlyNull, [
        {
          count: { rank: 0 },
          sum: { rank: null },
          avg: { rank: null },
          min: { released: null },
          max: { rank: null }
        }
      ])
      assert.deepEqual(await widgets().aggregate({ groupBy: [{ field: 'rank' }], count: ['id'] }), [
        { groupBy: { rank: null }, count: { id: 1 } },
        { groupBy: { rank: 1 }, count: { id: 1 } },
        { groupBy: { rank: 2 }, count: { id: 2 } },
        { groupBy: { rank: 5 }, count: { id: 1 } }
      ])
      assert.deepEqual(
        await widgets().aggregate({ groupBy: [{ field: 'released', by: 'MONTH' }], count: ['id'] }),
        [
          { groupBy: { released: null }, count: { id: 3 } },
          { groupBy: { released: '2026-03-01T00:00:00.000Z' }, count: { id: 2 } }
        ]
      )
    })

    it('leaves soft-deleted records out', async () => {
      await widgets().remove(5)
      assert.ok(await env.server.db('widgets').where({ id: 5 }).first(), 'the row is kept, marked deleted')
      assert.deepEqual(await widgets().aggregate({ count: ['id'], max: ['rank'] }), [
        { count: { id: 4 }, max: { rank: 2 } }
      ])
    })

    it('ANDs the scope with the filter, so that no filter widens it', async () => {
      const scope = { tenant: { eq: 'a' } }
      const widening = { or: [{ tenant: { eq: 'b' } }, { rank: { eq: 2 } }] }
      assert.deepEqual(
        await widgets().aggregate(
          { count: ['id'], min: ['id'] },
          { scope, queryModel: true, query: { filter: widening } }
        ),
        [{ count: { id: 1 }, min: { id: 3 } }]
      )
      assert.deepEqual(
        await widgets().aggregate({ partitionBy: 'tenant', count: ['id'] }, { scope: { rank: { gte: 2 } } }),
        {
          partitions: [
            { key: 'a', responses: [{ count: { id: 2 } }] },
            { key: 'b', responses: [{ count: { id: 1 } }] }
          ],
          empty: [{ count: { id: 0 } }]
        }
      )
    })

    it("applies the resource's defaultFilter through the plugin's hooks", async () => {
      await env.server.db('gadgets').delete()
      await env.server.db('gadgets').insert([
        { id: 'g1', name: 'one', active: true },
        { id: 'g2', name: 'two', active: false },
        { id: 'g3', name: 'three', active: true }
      ])
      const gadgets = serviceOf(env.server, 'gadgets')
      assert.deepEqual(
        await gadgets.aggregate({ groupBy: [{ field: 'active' }], count: ['id'], min: ['id'] }),
        [{ groupBy: { active: true }, count: { id: 2 }, min: { id: 'g1' } }]
      )
    })

    it("runs inside the caller's transaction", async () => {
      await env.server.db
        .transaction(async (trx) => {
          await trx('widgets').insert({ id: 6, tenant: 'a', secret: 's', name: 'w6', rank: 7, weight: 1 })
          const inside = await widgets().aggregate({ count: ['id'], max: ['rank'] }, { transaction: { trx } })
          assert.deepEqual(inside, [{ count: { id: 6 }, max: { rank: 7 } }])
          throw new Error('roll back')
        })
        .catch((error: Error) => assert.equal(error.message, 'roll back'))
      assert.deepEqual(await widgets().aggregate({ count: ['id'] }), [{ count: { id: 5 } }])
    })
  },
  createFixtureApp
)

/** A resource whose integers fill 64 bits, as a BIGINT column holds them. */
async function bigCountersApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('counters', (table) => {
    table.increments('id')
    table.bigInteger('amount').notNullable()
  })
  const counters = defineResource({
    name: 'Counter',
    schema: Type.Object({ id: IDField(Type.Integer()), amount: FilterableField(Type.Integer()) }),
    enableAggregate: true
  })
  return pluginApp(db, [counters])
}

forEachDatabase(
  'Aggregates: sums of integers past 64 bits',
  (env) => {
    it('sums integers past 2^63 as a double on every database (SQLite failed: overflow)', async () => {
      const largest = Number.MAX_SAFE_INTEGER
      const rows = Array.from({ length: 1100 }, () => ({ amount: largest }))
      await env.server.db.batchInsert('counters', rows, 100)
      const counters = serviceOf(env.server, 'counters')
      const [response] = await counters.aggregate({ sum: ['amount'], avg: ['amount'] })
      const exact = Number(1100n * BigInt(largest))
      assert.ok(Math.abs(response.sum!.amount! - exact) / exact < 1e-12, `${response.sum!.amount} ≠ ${exact}`)
      assert.ok(Math.abs(response.avg!.amount! - largest) / largest < 1e-12, `${response.avg!.amount}`)
    })
  },
  bigCountersApp
)
