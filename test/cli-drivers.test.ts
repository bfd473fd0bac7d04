import assert from 'node:assert/strict'
import knex from 'knex'
import { knexConfig, type Drivers } from '../example/database'
import { migrateLatest } from '../example/migrations'
import { exampleResources } from '../example/resources'
import { bucketKeyOf } from '../src/aggregate/time-zone'
import { parseCsv } from './support/csv'
import { databaseNames } from './support/databases'
import { graphql } from './support/graphql'
import { pluginApp } from './support/plugin-app'
import { clearTables, seedTodoItems } from './support/seed'
import { startServer, type AppFactory, type TestServer } from './support/server'

/**
 * The drivers apps made by the Feathers CLI use, node-sqlite3 and mysql, answer what the suite's drivers
 * (better-sqlite3, mysql2) answer, whichever drivers the rest of the suite runs on (`npm run test:drivers`).
 */

const onDrivers =
  (drivers: Drivers): AppFactory =>
  async (databaseUrl) => {
    const db = knex(knexConfig(databaseUrl, drivers))
    await migrateLatest(db)
    return pluginApp(db, exampleResources, { quietErrors: true })
  }

const DEFAULT: Drivers = { sqlite: 'better-sqlite3', mysql: 'mysql2' }
const CLI: Drivers = { sqlite: 'sqlite3', mysql: 'mysql' }

const HOUR = 3_600_000
const DAY = 24 * HOUR

/**
 * Instants every few hours around the daylight-saving changes of 2024 in the zones below, around midnights and
 * hours (a millisecond before and on them), and spread over 1850 to 2600, where the rules repeat.
 */
function instants() {
  const times: number[] = []
  for (const change of [
    '2024-03-10T07:00:00Z',
    '2024-03-31T01:00:00Z',
    '2024-10-27T01:00:00Z',
    '2024-11-03T06:00:00Z',
    '2024-04-06T15:00:00Z',
    '2024-10-05T16:00:00Z'
  ]) {
    for (let step = -26; step <= 26; step++) {
      const time = Date.parse(change) + step * HOUR
      times.push(time, time - 1, time + 30 * 60_000)
    }
  }
  for (let index = 0; index < 300; index++) {
    times.push(
      Date.UTC(1850, 0, 1) + Math.round(((index * 7919) % 300) * 2.5 * 365.25 * DAY + index * 3_456_789)
    )
  }
  return times.map((time) => new Date(time).toISOString())
}

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'America/Sao_Paulo'
]
const BUCKETS = ['HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] as const

async function seeded(drivers: Drivers, database: 'sqlite' | 'mysql', created: string[]) {
  const server = await startServer(database, onDrivers(drivers))
  await clearTables(server.db)
  await seedTodoItems(
    server.db,
    created.map((time, index) => ({ title: `t${index}`, created: time, priority: index % 5 }))
  )
  return server
}

describe('SQLite on node-sqlite3: date buckets in time zones as on better-sqlite3, in SQL alone', function () {
  this.timeout(120_000)
  const created = instants()
  let reference: TestServer
  let cli: TestServer
  before(async () => {
    reference = await seeded(DEFAULT, 'sqlite', created)
    cli = await seeded(CLI, 'sqlite', created)
  })
  after(async () => {
    await reference?.close()
    await cli?.close()
  })

  const aggregate = async (server: TestServer, query: string) => {
    const response = await server.http('GET', `/todo-items/aggregate?${query}`)
    assert.equal(response.status, 200, response.text)
    return response.body
  }

  for (const zone of ZONES) {
    it(`groups by every bucket in ${zone} as better-sqlite3's function does`, async () => {
      for (const bucket of BUCKETS) {
        const query = `groupBy=created:${bucket}&timeZone=${zone}&count=id&max=priority`
        const expected = await aggregate(reference, query)
        assert.ok(expected.nodes.length > 10, `${bucket}: ${expected.nodes.length} groups`)
        assert.deepEqual(await aggregate(cli, query), expected, `${bucket} in ${zone}`)
      }
    })
  }

  it('fills, filters by having, orders and pages zoned buckets as better-sqlite3 does', async () => {
    const window = 'from=2024-10-20T00:00:00Z&to=2024-11-10T00:00:00Z&fill=true'
    for (const query of [
      `groupBy=created:DAY&timeZone=America/New_York&count=id&${window}`,
      `groupBy=created:HOUR&timeZone=Europe/Berlin&count=id&from=2024-10-26T20:00:00Z&to=2024-10-27T06:00:00Z&fill=true`,
      `groupBy=created:WEEK&timeZone=Australia/Lord_Howe&count=id&having=${encodeURIComponent('{"count":{"id":{"gt":3}}}')}&sort=-count.id&limit=5&totalCount=true`
    ]) {
      assert.deepEqual(await aggregate(cli, query), await aggregate(reference, query), query)
    }
  })
})

describe('MySQL on mysql: DATE buckets as dates in GraphQL and CSV, whatever the process time zone', function () {
  this.timeout(120_000)
  const created = instants()
  let server: TestServer
  const zone = process.env.TZ
  before(async function () {
    if (!databaseNames.includes('mysql')) this.skip()
    // Node reads TZ again when it is set: the driver's dates and Date's text are then New York's.
    process.env.TZ = 'America/New_York'
    server = await seeded(CLI, 'mysql', created)
  })
  after(async () => {
    if (zone === undefined) delete process.env.TZ
    else process.env.TZ = zone
    await server?.close()
  })

  /** `{bucket start: count}` as JavaScript computes the UTC buckets. */
  const expected = (bucket: (typeof BUCKETS)[number]) => {
    const counts: Record<string, number> = {}
    for (const time of created) {
      const key = `${bucketKeyOf(Date.parse(time), bucket, 'UTC')}.000Z`
      counts[key] = (counts[key] ?? 0) + 1
    }
    return counts
  }

  for (const bucket of BUCKETS) {
    it(`names ${bucket} buckets in UTC by their start in GraphQL and in CSV`, async () => {
      const response = await graphql(
        server,
        `{ todoItemAggregate { groupBy { created(by: ${bucket}) } count { id } } }`
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const groups = response.data.todoItemAggregate as Array<{
        groupBy: { created: string }
        count: { id: number }
      }>
      assert.deepEqual(
        Object.fromEntries(groups.map((group) => [group.groupBy.created, group.count.id])),
        expected(bucket)
      )
      const csv = await server.http(
        'GET',
        `/todo-items/aggregate?groupBy=created:${bucket}&count=id&format=csv`
      )
      assert.equal(csv.status, 200, csv.text)
      const { header, records } = parseCsv(csv.text)
      const column = header.find((name) => name.includes('created'))!
      assert.deepEqual(
        records.map((record) => record[column]),
        groups.map((group) => group.groupBy.created)
      )
    })
  }
})
