import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { knexConfig } from '../example/database'
import { defineResource, FilterableField, IDField } from '../src'
import { forEachDatabase } from './support/server'
import { feathers } from '@feathersjs/feathers'
import { bodyParser, errorHandler, koa, rest } from '@feathersjs/koa'
import restClient from '@feathersjs/rest-client'
import { feathersQuery } from '../src'
import { graphql, graphqlCounted } from './support/graphql'
import { clearTables, seedLinks, seedTags, seedTodoItems } from './support/seed'

/**
 * Deviations, variances and the median on every aggregate surface, checked against the formulas below over
 * the seeded rows, within the documented tolerance (relative 1e-9 of the largest magnitude involved).
 */
const sensorResource = defineResource({
  name: 'Sensor',
  schema: Type.Object({ id: IDField(Type.Integer()), name: FilterableField(Type.String()) }),
  many: { readings: { resource: 'Reading', foreignKey: 'sensorId' } },
  enableAggregate: true
})

const readingResource = defineResource({
  name: 'Reading',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    sensorId: FilterableField(Type.Integer()),
    value: FilterableField(Type.Number(), { nullable: true }),
    steps: FilterableField(Type.Integer(), { nullable: true }),
    ok: FilterableField(Type.Boolean()),
    at: FilterableField(Type.String({ format: 'date-time' })),
    label: FilterableField(Type.String())
  }),
  // Rows labelled hidden are never seen, by root or relation aggregates.
  authorize: () => ({ label: { neq: 'hidden' } }),
  enableAggregate: true
})

interface Reading {
  sensorId: number
  value: number | null
  steps: number | null
  ok: boolean
  at: string
  label: string
}

const BIG = 1e12
const READINGS: Reading[] = [
  // Sensor 1: large magnitudes whose spread is small (a sum of squares would cancel), and a null.
  ...[1, 2, 4, 8, null].map((delta, index) => ({
    sensorId: 1,
    value: delta === null ? null : BIG + delta,
    steps: index,
    ok: index % 2 === 0,
    // 23:30 UTC is the next day in Berlin.
    at: `2026-03-0${index + 1}T23:30:00.000Z`,
    label: 'big'
  })),
  // Sensor 2: negatives, a zero and an even count (the median interpolates); one hidden row.
  ...[-3.5, 2, -7, 10.25, 0, -1e6].map((value, index) => ({
    sensorId: 2,
    value,
    steps: -index * 3,
    ok: index < 3,
    at: `2026-03-0${index + 1}T12:00:00.000Z`,
    label: index === 5 ? 'hidden' : 'small'
  })),
  // Sensor 4: a single value. Sensor 3 has no readings.
  { sensorId: 4, value: 42, steps: 7, ok: true, at: '2026-03-01T00:00:00.000Z', label: 'single' }
]
const VISIBLE = READINGS.filter((reading) => reading.label !== 'hidden')

/** The reference formulas: two-pass variance, percentile_cont's linear interpolation. */
function statistics(values: Array<number | null>) {
  const xs = values.filter((x): x is number => x !== null)
  const n = xs.length
  const mean = xs.reduce((sum, x) => sum + x, 0) / n
  const squares = xs.reduce((sum, x) => sum + (x - mean) ** 2, 0)
  const varPop = n ? squares / n : null
  const varSamp = n > 1 ? squares / (n - 1) : null
  return {
    stddevPop: varPop === null ? null : Math.sqrt(varPop),
    stddevSamp: varSamp === null ? null : Math.sqrt(varSamp),
    varPop,
    varSamp,
    median: percentile(xs, 0.5)
  }
}

/** PostgreSQL's percentile_cont: the values ranked floor(p (n - 1)) and the next (from 0), interpolated. */
function percentile(values: Array<number | null>, p: number) {
  const sorted = values.filter((x): x is number => x !== null).sort((a, b) => a - b)
  if (!sorted.length) return null
  const position = p * (sorted.length - 1)
  const low = Math.floor(position)
  return sorted[low] + (sorted[Math.ceil(position)] - sorted[low]) * (position - low)
}

const FUNCTIONS = ['stddevPop', 'stddevSamp', 'varPop', 'varSamp', 'median'] as const
type Stats = ReturnType<typeof statistics>

/** Relative 1e-9 of the values' magnitude: variances of 1e12 ± 8 are exact in doubles, medians near it. */
function assertClose(actual: unknown, expected: number | null, what: string, scale = 1) {
  if (expected === null) return assert.equal(actual, null, what)
  assert.equal(typeof actual, 'number', `${what}: ${actual}`)
  const tolerance = 1e-9 * Math.max(Math.abs(expected), scale)
  assert.ok(Math.abs((actual as number) - expected) <= tolerance, `${what}: ${actual} ≠ ${expected}`)
}

function assertStats(actual: Record<string, any>, field: string, expected: Stats, what: string) {
  for (const fn of FUNCTIONS) assertClose(actual[fn]?.[field], expected[fn], `${what} ${fn}.${field}`)
}

const of = (rows: Reading[], key: 'value' | 'steps' = 'value') => statistics(rows.map((row) => row[key]))
const selection = (field: string) => FUNCTIONS.map((fn) => `${fn} { ${field} }`).join(' ')

async function createStatisticsApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('sensors', (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  await db.schema.createTable('readings', (table) => {
    table.increments('id')
    table.integer('sensorId').notNullable()
    table.double('value').nullable()
    table.integer('steps').nullable()
    table.boolean('ok').notNullable()
    table.datetime('at', { precision: 3 }).notNullable()
    table.string('label').notNullable()
  })
  await db('sensors').insert([1, 2, 3, 4].map((id) => ({ id, name: `s${id}` })))
  await db('readings').insert(READINGS.map((reading) => ({ ...reading, at: new Date(reading.at) })))
  // The Feathers REST transport too, for a Feathers client's custom `aggregate` method.
  const app = koa(feathers())
  app.use(errorHandler())
  app.use(bodyParser())
  app.configure(rest())
  app.configure(feathersQuery({ Model: db, resources: [sensorResource, readingResource] }))
  return { app, db }
}

forEachDatabase(
  'Aggregates: deviations, variances and the median',
  (env) => {
    /** Runs a GraphQL operation, checks the statements it ran (one per aggregate), and answers its data. */
    const query = async (document: string, expectedStatements = 1) => {
      const { data, statements } = await graphqlCounted(env.server, document)
      assert.equal(statements, expectedStatements, 'one statement per aggregate')
      return data
    }

    it('answers every function of a float and an integer field, nulls, negatives and 1e12 magnitudes', async () => {
      const data = await query(`{ readingAggregate { ${selection('value')} ${selection('steps')} } }`)
      assertStats(data.readingAggregate[0], 'value', of(VISIBLE), 'all')
      assertStats(data.readingAggregate[0], 'steps', of(VISIBLE, 'steps'), 'all')
      const big = await query(`{ readingAggregate(filter: {sensorId: {eq: 1}}) { ${selection('value')} } }`)
      // Exact in doubles, so the tolerance is relative to the variance itself, not to 1e12.
      assertStats(big.readingAggregate[0], 'value', of(VISIBLE.filter((r) => r.sensorId === 1)), 'big')
      assert.equal(big.readingAggregate[0].varPop.value, 7.1875)
    })

    it('answers null for no values, and null sample forms for a single value', async () => {
      const none = await query(`{ readingAggregate(filter: {sensorId: {eq: 3}}) { ${selection('value')} } }`)
      assertStats(none.readingAggregate[0], 'value', statistics([]), 'none')
      const one = await query(`{ readingAggregate(filter: {sensorId: {eq: 4}}) { ${selection('value')} } }`)
      assert.deepEqual(
        FUNCTIONS.map((fn) => one.readingAggregate[0][fn].value),
        [0, null, 0, null, 42]
      )
    })

    it('groups by a boolean and by days in a time zone', async () => {
      const data = await query(`{ readingAggregate { groupBy { ok } ${selection('value')} } }`)
      assert.deepEqual(
        data.readingAggregate.map((group: any) => group.groupBy.ok),
        [false, true]
      )
      for (const group of data.readingAggregate) {
        const rows = VISIBLE.filter((row) => row.ok === group.groupBy.ok)
        assertStats(group, 'value', of(rows), `ok=${group.groupBy.ok}`)
      }
      const days = await query(
        `{ readingAggregate { groupBy { at(by: DAY, timeZone: "Europe/Berlin") } ${selection('value')} } }`
      )
      const dayOf = (at: string) => new Date(at).toLocaleDateString('sv-SE', { timeZone: 'Europe/Berlin' })
      const expectedDays = [...new Set(VISIBLE.map((row) => dayOf(row.at)))].sort()
      assert.deepEqual(
        days.readingAggregate.map((group: any) => dayOf(group.groupBy.at)),
        expectedDays
      )
      for (const group of days.readingAggregate) {
        const rows = VISIBLE.filter((row) => dayOf(row.at) === dayOf(group.groupBy.at))
        assertStats(group, 'value', of(rows), `day ${group.groupBy.at}`)
      }
    })

    it('fills a date series (null where no record falls) and pages groups, root and per parent', async () => {
      const filled = await query(`{ readingAggregate(
          filter: {at: {gte: "2026-02-28T00:00:00Z", lt: "2026-03-08T00:00:00Z"}}) {
        groupBy { at(by: DAY, fill: {}) } count { id } ${selection('value')} } }`)
      const dayOf = (at: string) => at.slice(0, 10)
      assert.equal(filled.readingAggregate.length, 8)
      for (const group of filled.readingAggregate) {
        const rows = VISIBLE.filter((row) => dayOf(row.at) === dayOf(group.groupBy.at))
        assert.equal(group.count.id, rows.length)
        assertStats(group, 'value', of(rows), `day ${group.groupBy.at}`)
      }
      const paged = await query(`{ readingAggregateGroups(paging: {limit: 1, offset: 1},
          sorting: [{field: value, aggregate: STDDEV_POP, direction: DESC, nulls: NULLS_LAST}]) {
        nodes { groupBy { sensorId } stddevPop { value } } totalCount } }`)
      const bySpread = [1, 2, 4].sort(
        (a, b) =>
          of(VISIBLE.filter((row) => row.sensorId === b)).stddevPop! -
          of(VISIBLE.filter((row) => row.sensorId === a)).stddevPop!
      )
      assert.equal(paged.readingAggregateGroups.totalCount, 3)
      assert.deepEqual(
        paged.readingAggregateGroups.nodes.map((node: any) => node.groupBy.sensorId),
        [bySpread[1]]
      )
      const perParent = await query(
        `{ sensors { edges { node { id readingsAggregate(paging: {limit: 1},
            sorting: [{field: value, aggregate: MEDIAN, direction: DESC}]) {
          groupBy { ok } median { value } } } } } }`,
        2
      )
      for (const { node } of perParent.sensors.edges) {
        const rows = VISIBLE.filter((row) => row.sensorId === Number(node.id))
        const groups = [false, true]
          .map((ok) => ({ ok, median: of(rows.filter((row) => row.ok === ok)).median }))
          .filter((group) => rows.some((row) => row.ok === group.ok))
          // NULLs are the smallest value: last when descending.
          .sort((a, b) => (b.median ?? -Infinity) - (a.median ?? -Infinity))
        assert.deepEqual(
          node.readingsAggregate.map((group: any) => group.groupBy.ok),
          groups.slice(0, 1).map((group) => group.ok),
          `sensor ${node.id}`
        )
        if (groups.length)
          assertClose(node.readingsAggregate[0].median.value, groups[0].median, 'page median')
      }
    })

    it('has and sorts groups by a deviation and by the median', async () => {
      const data = await query(`{ readingAggregate(
          having: {stddevSamp: {value: {gt: 1}}},
          sorting: [{field: value, aggregate: MEDIAN, direction: DESC}]) {
        groupBy { sensorId } median { value } stddevSamp { value } } }`)
      const expected = [1, 2, 4]
        .map((sensorId) => ({ sensorId, ...of(VISIBLE.filter((row) => row.sensorId === sensorId)) }))
        .filter((group) => group.stddevSamp !== null && group.stddevSamp > 1)
        .sort((a, b) => b.median! - a.median!)
      assert.deepEqual(
        data.readingAggregate.map((group: any) => group.groupBy.sensorId),
        expected.map((group) => group.sensorId)
      )
      const byDeviation = await query(`{ readingAggregate(
          sorting: [{field: value, aggregate: VAR_POP, direction: ASC}]) { groupBy { sensorId } } }`)
      const order = [1, 2, 4].sort(
        (a, b) =>
          of(VISIBLE.filter((row) => row.sensorId === a)).varPop! -
          of(VISIBLE.filter((row) => row.sensorId === b)).varPop!
      )
      assert.deepEqual(
        byDeviation.readingAggregate.map((group: any) => group.groupBy.sensorId),
        order
      )
    })

    it('answers relation aggregates of several parents in one statement, scoped by authorize', async () => {
      const data = await query(
        `{ sensors { edges { node { id readingsAggregate { ${selection('value')} } } } } }`,
        2 // the sensors, then the aggregates of all four
      )
      const nodes = data.sensors.edges.map((edge: any) => edge.node)
      assert.equal(nodes.length, 4)
      for (const node of nodes) {
        const rows = VISIBLE.filter((row) => row.sensorId === Number(node.id))
        assertStats(node.readingsAggregate[0], 'value', of(rows), `sensor ${node.id}`)
      }
    })

    it('answers REST (JSON and CSV) and the service method as GraphQL does', async () => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await env.server.http(
          'GET',
          '/readings/aggregate?groupBy=sensorId&stddevPop=value&varSamp=value&median=value,steps'
        )
      })
      assert.equal(response.status, 200, response.text)
      assert.equal(statements, 1)
      for (const node of response.body.nodes) {
        const rows = VISIBLE.filter((row) => row.sensorId === node.groupBy.sensorId)
        assertClose(node.stddevPop.value, of(rows).stddevPop, 'rest stddevPop')
        assertClose(node.varSamp.value, of(rows).varSamp, 'rest varSamp')
        assertClose(node.median.steps, of(rows, 'steps').median, 'rest median')
      }
      const csv = await env.server.http('GET', '/readings/aggregate?median=value&format=csv')
      assert.equal(csv.status, 200, csv.text)
      const [header, row] = csv.text.trim().split('\n')
      assert.equal(header, '"median.value"')
      assertClose(Number(row), of(VISIBLE).median, 'csv median')

      const client = feathers().configure(restClient(env.server.baseUrl).fetch(fetch))
      const readings = (client as any).service('readings').methods('aggregate')
      const request = { groupBy: [{ field: 'ok' }], varPop: ['value'], median: ['value'] }
      let groups: any
      assert.equal(
        await env.server.countStatements(async () => (groups = await readings.aggregate(request))),
        1
      )
      for (const group of groups) {
        const rows = VISIBLE.filter((row) => row.ok === group.groupBy.ok)
        assertClose(group.varPop.value, of(rows).varPop, 'client varPop')
        assertClose(group.median.value, of(rows).median, 'client median')
      }
      const refused = await readings.aggregate({ median: ['label'] }).catch((error: any) => error)
      assert.equal(refused.code, 400)
      assert.deepEqual(refused.errors, [
        { field: 'median.0', message: 'median applies to numeric fields only' }
      ])
    })

    it('counts a median as a sort in the operation cost, before any statement', async () => {
      // Five aliases of two fields per group (1,000 groups unpaged): 17,001 for averages, 47,001 for medians (beyond 25,000).
      const document = (fn: string) =>
        `{ readingAggregate { groupBy { ok } ${[1, 2, 3, 4, 5].map((n) => `a${n}: ${fn} { value steps }`).join(' ')} } }`
      await query(document('avg'))
      let refused: any
      assert.equal(
        await env.server.countStatements(
          async () => (refused = await graphql(env.server, document('median')))
        ),
        0
      )
      assert.equal(refused.errors[0].extensions.code, 'QUERY_TOO_COMPLEX')
      // The walk stops past the bound: it says where.
      assert.equal(refused.errors[0].extensions.cost, 25001)
    })

    it('answers several percentiles through aliases, in relation aggregates, REST, CSV and the service', async () => {
      const data = await query(`{ readingAggregate { groupBy { sensorId }
          p0: percentile(p: 0) { value } p95: percentile(p: 0.95) { value steps } p1: percentile(p: 1) { value } } }`)
      for (const group of data.readingAggregate) {
        const rows = VISIBLE.filter((row) => row.sensorId === group.groupBy.sensorId)
        const values = rows.map((row) => row.value)
        assertClose(group.p0.value, percentile(values, 0), 'p0')
        assertClose(group.p95.value, percentile(values, 0.95), 'p95')
        assertClose(
          group.p95.steps,
          percentile(
            rows.map((row) => row.steps),
            0.95
          ),
          'p95 steps'
        )
        assertClose(group.p1.value, percentile(values, 1), 'p1')
      }
      const parents = await query(
        `{ sensors { edges { node { id readingsAggregate { p25: percentile(p: 0.25) { value } } } } } }`,
        2
      )
      for (const { node } of parents.sensors.edges) {
        const rows = VISIBLE.filter((row) => row.sensorId === Number(node.id))
        assertClose(
          node.readingsAggregate[0].p25.value,
          percentile(
            rows.map((row) => row.value),
            0.25
          ),
          `sensor ${node.id}`
        )
      }
      const rest = await env.server.http('GET', '/readings/aggregate?percentile=0.95:value,0.1:steps')
      assert.equal(rest.status, 200, rest.text)
      assertClose(
        rest.body.nodes[0].percentile['0.95'].value,
        percentile(
          VISIBLE.map((r) => r.value),
          0.95
        ),
        'rest'
      )
      assertClose(
        rest.body.nodes[0].percentile['0.1'].steps,
        percentile(
          VISIBLE.map((r) => r.steps),
          0.1
        ),
        'rest'
      )
      const csv = await env.server.http('GET', '/readings/aggregate?percentile=0.95:value&format=csv')
      const [header, row] = csv.text.trim().split('\n')
      assert.equal(header, '"percentile(0.95).value"')
      assertClose(
        Number(row),
        percentile(
          VISIBLE.map((r) => r.value),
          0.95
        ),
        'csv'
      )
      const service: any = env.server.app.service('readings')
      const [all] = await service.aggregate({ percentile: [{ p: 0.75, fields: ['value'] }] })
      assertClose(
        all.percentile['0.75'].value,
        percentile(
          VISIBLE.map((r) => r.value),
          0.75
        ),
        'service'
      )
    })

    it('refuses a variance beyond the largest double with a 400, never a 500', async () => {
      const rows = [1e300, -1e300].map((value) => ({
        ...READINGS[0],
        sensorId: 9,
        value,
        at: new Date(READINGS[0].at)
      }))
      await env.server.db('readings').insert(rows)
      try {
        const response = await env.server.http('GET', '/readings/aggregate?sensorId=9&varPop=value')
        assert.equal(response.status, 400, response.text)
        assert.match(response.body.errors[0].field, /^(aggregate|varPop\.value)$/)
        assert.match(response.body.errors[0].message, /out of range: beyond ±1\.79/)
        const median = await env.server.http('GET', '/readings/aggregate?sensorId=9&median=value')
        assert.equal(median.status, 200, median.text)
        assert.equal(median.body.nodes[0].median.value, 0)
      } finally {
        await env.server.db('readings').where({ sensorId: 9 }).delete()
      }
    })

    it('refuses non-numeric fields with a 400 naming the entry', async () => {
      const response = await env.server.http('GET', '/readings/aggregate?median=label&stddevSamp=ok')
      assert.equal(response.status, 400)
      assert.deepEqual(response.body.errors.map((error: any) => error.field).sort(), [
        'median.0',
        'stddevSamp.0'
      ])
      const percentiles = await env.server.http(
        'GET',
        '/readings/aggregate?percentile=1.5:value,value,0.5:label,-0.1:value'
      )
      assert.equal(percentiles.status, 400)
      assert.deepEqual(
        percentiles.body.errors.map((error: any) => error.field),
        ['percentile.0.p', 'percentile.1.p', 'percentile.2.fields.0', 'percentile.3.p']
      )
      const outside = await graphql(env.server, '{ readingAggregate { percentile(p: 1.01) { value } } }')
      assert.equal(outside.errors?.[0].extensions.code, 'BAD_USER_INPUT')
      assert.equal(outside.errors?.[0].extensions.errors?.[0].field, 'percentile.0.p')
      const missing = await graphql(env.server, '{ readingAggregate { percentile { value } } }')
      assert.equal(missing.errors?.[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
      const gql = await graphql(env.server, '{ readingAggregate { median { label } } }')
      assert.equal(gql.errors?.[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
      const having = await graphql(
        env.server,
        '{ readingAggregate(having: {varPop: {label: {gt: 1}}}) { count { id } } }'
      )
      assert.ok(having.errors?.length)
    })
  },
  createStatisticsApp
)

forEachDatabase('Aggregates: statistics of many-to-many relations, per parent through the links', (env) => {
  // Item i has priority (i - 3) * 1e12 / 7 and is linked to tags 0..i % 4: each tag its own set of items.
  const priorityOf = (index: number) => ((index - 3) * 1e12) / 7
  const tagsOf = (index: number) => Array.from({ length: (index % 4) + 1 }, (_, tag) => tag)

  before(async function () {
    this.timeout(60000)
    const { db } = env.server
    await clearTables(db)
    const items = await seedTodoItems(
      db,
      Array.from({ length: 9 }, (_, index) => ({ title: `item ${index}`, priority: priorityOf(index) }))
    )
    const tags = await seedTags(db, ['t0', 't1', 't2', 't3'])
    await seedLinks(
      db,
      items.flatMap((item, index) => tagsOf(index).map((tag) => [item, tags[tag]] as [number, number]))
    )
  })

  it('answers each tag the deviation, median and a percentile of its items, in one statement', async () => {
    let response: any
    const statements = await env.server.countStatements(async () => {
      response = await graphql(
        env.server,
        `
          {
            tags(sorting: [{ field: name, direction: ASC }]) {
              edges {
                node {
                  name
                  todoItemsAggregate {
                    stddevSamp {
                      priority
                    }
                    median {
                      priority
                    }
                    p90: percentile(p: 0.9) {
                      priority
                    }
                  }
                }
              }
            }
          }
        `
      )
    })
    assert.equal(response.errors, undefined, JSON.stringify(response.errors))
    assert.equal(statements, 2, 'the tags, then the aggregates of all of them')
    for (const [tag, { node }] of response.data.tags.edges.entries()) {
      const values = Array.from({ length: 9 }, (_, index) => index)
        .filter((index) => tagsOf(index).includes(tag))
        .map(priorityOf)
      const [aggregate] = node.todoItemsAggregate
      assertClose(aggregate.stddevSamp.priority, statistics(values).stddevSamp, `${node.name} stddevSamp`)
      assertClose(aggregate.median.priority, percentile(values, 0.5), `${node.name} median`)
      assertClose(aggregate.p90.priority, percentile(values, 0.9), `${node.name} p90`)
    }
  })
})
