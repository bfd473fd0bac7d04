import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { clearTables, seedSubTasks, seedTodoItems } from './support/seed'
import { codes, graphql } from './support/graphql'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'

const app = exampleResourcesApp({
  quietErrors: true,
  resources: [{ ...todoItemResource, aggregate: { maxFillBuckets: 100 } }, subTaskResource, ...tagResources]
})

/**
 * Instants around the 2024 daylight-saving changes of Berlin (Mar 31 and Oct 27, at 01:00 UTC) and New York
 * (Mar 10 at 07:00 UTC, Nov 3 at 06:00 UTC), and around a year's end. The comments give the local times.
 */
const CREATED = [
  '2024-03-30T22:30:00.000Z', // 1  Berlin Mar 30 23:30 CET      New York Mar 30 18:30 EDT
  '2024-03-30T23:30:00.000Z', // 2  Berlin Mar 31 00:30 CET      New York Mar 30 19:30
  '2024-03-31T00:59:59.999Z', // 3  Berlin Mar 31 01:59:59 CET   New York Mar 30 20:59
  '2024-03-31T01:00:00.000Z', // 4  Berlin Mar 31 03:00 CEST     New York Mar 30 21:00
  '2024-03-31T22:30:00.000Z', // 5  Berlin Apr 1 00:30 CEST      New York Mar 31 18:30
  '2024-10-27T00:30:00.000Z', // 6  Berlin Oct 27 02:30 CEST     New York Oct 26 20:30 EDT
  '2024-10-27T01:30:00.000Z', // 7  Berlin Oct 27 02:30 CET      New York Oct 26 21:30
  '2024-10-27T23:30:00.000Z', // 8  Berlin Oct 28 00:30 CET      New York Oct 27 19:30
  '2024-11-03T05:30:00.000Z', // 9  Berlin Nov 3 06:30           New York Nov 3 01:30 EDT
  '2024-11-03T06:30:00.000Z', // 10 Berlin Nov 3 07:30           New York Nov 3 01:30 EST
  '2024-11-03T04:30:00.000Z', // 11 Berlin Nov 3 05:30           New York Nov 3 00:30 EDT
  '2024-03-10T06:30:00.000Z', // 12 Berlin Mar 10 07:30          New York Mar 10 01:30 EST
  '2024-03-10T07:30:00.000Z', // 13 Berlin Mar 10 08:30          New York Mar 10 03:30 EDT
  '2024-12-31T23:30:00.000Z', // 14 Berlin 2025 Jan 1 00:30      New York Dec 31 18:30 EST
  '2024-01-01T03:00:00.000Z' //  15 Berlin Jan 1 04:00           New York 2023 Dec 31 22:00
]

/** `{bucket start: count}`, worked out by hand from the local times above. */
const EXPECTED: Record<string, Record<string, number>> = {
  'DAY UTC': {
    '2024-01-01T00:00:00.000Z': 1,
    '2024-03-10T00:00:00.000Z': 2,
    '2024-03-30T00:00:00.000Z': 2,
    '2024-03-31T00:00:00.000Z': 3,
    '2024-10-27T00:00:00.000Z': 3,
    '2024-11-03T00:00:00.000Z': 3,
    '2024-12-31T00:00:00.000Z': 1
  },
  'DAY Europe/Berlin': {
    '2023-12-31T23:00:00.000Z': 1,
    '2024-03-09T23:00:00.000Z': 2,
    '2024-03-29T23:00:00.000Z': 1,
    '2024-03-30T23:00:00.000Z': 3, // Mar 31, 23 hours long
    '2024-03-31T22:00:00.000Z': 1,
    '2024-10-26T22:00:00.000Z': 2, // Oct 27, 25 hours long
    '2024-10-27T23:00:00.000Z': 1,
    '2024-11-02T23:00:00.000Z': 3,
    '2024-12-31T23:00:00.000Z': 1
  },
  'DAY America/New_York': {
    '2023-12-31T05:00:00.000Z': 1,
    '2024-03-10T05:00:00.000Z': 2,
    '2024-03-30T04:00:00.000Z': 4,
    '2024-03-31T04:00:00.000Z': 1,
    '2024-10-26T04:00:00.000Z': 2,
    '2024-10-27T04:00:00.000Z': 1,
    '2024-11-03T04:00:00.000Z': 3, // 25 hours long
    '2024-12-31T05:00:00.000Z': 1
  },
  'WEEK Europe/Berlin': {
    '2023-12-31T23:00:00.000Z': 1,
    '2024-03-03T23:00:00.000Z': 2,
    '2024-03-24T23:00:00.000Z': 4,
    '2024-03-31T22:00:00.000Z': 1,
    '2024-10-20T22:00:00.000Z': 2,
    '2024-10-27T23:00:00.000Z': 4,
    '2024-12-29T23:00:00.000Z': 1
  },
  'MONTH America/New_York': {
    '2023-12-01T05:00:00.000Z': 1,
    '2024-03-01T05:00:00.000Z': 7,
    '2024-10-01T04:00:00.000Z': 3,
    '2024-11-01T04:00:00.000Z': 3,
    '2024-12-01T05:00:00.000Z': 1
  },
  'QUARTER Europe/Berlin': {
    '2023-12-31T23:00:00.000Z': 7,
    '2024-03-31T22:00:00.000Z': 1,
    '2024-09-30T22:00:00.000Z': 6,
    '2024-12-31T23:00:00.000Z': 1
  },
  'QUARTER UTC': {
    '2024-01-01T00:00:00.000Z': 8,
    '2024-10-01T00:00:00.000Z': 7
  },
  'YEAR America/New_York': {
    '2023-01-01T05:00:00.000Z': 1,
    '2024-01-01T05:00:00.000Z': 14
  },
  'YEAR UTC': { '2024-01-01T00:00:00.000Z': 15 }
}

/** Hours: in Berlin the two 02:00 hours of Oct 27 are two buckets; Kolkata's hours start at :30 UTC. */
const HOURS: Array<[string, string, string, Record<string, number>]> = [
  [
    'Europe/Berlin',
    '2024-10-27T00:00:00.000Z',
    '2024-10-27T02:00:00.000Z',
    {
      '2024-10-27T00:00:00.000Z': 1,
      '2024-10-27T01:00:00.000Z': 1
    }
  ],
  [
    'Europe/Berlin',
    '2024-03-31T00:00:00.000Z',
    '2024-03-31T02:00:00.000Z',
    {
      '2024-03-31T00:00:00.000Z': 1,
      '2024-03-31T01:00:00.000Z': 1
    }
  ],
  [
    'America/New_York',
    '2024-11-03T00:00:00.000Z',
    '2024-11-03T12:00:00.000Z',
    {
      '2024-11-03T04:00:00.000Z': 1,
      '2024-11-03T05:00:00.000Z': 1,
      '2024-11-03T06:00:00.000Z': 1
    }
  ],
  [
    'Asia/Kolkata',
    '2024-03-30T00:00:00.000Z',
    '2024-03-31T02:00:00.000Z',
    {
      '2024-03-30T22:30:00.000Z': 1,
      '2024-03-30T23:30:00.000Z': 1,
      '2024-03-31T00:30:00.000Z': 2
    }
  ],
  [
    'UTC',
    '2024-03-31T00:00:00.000Z',
    '2024-03-31T02:00:00.000Z',
    {
      '2024-03-31T00:00:00.000Z': 1,
      '2024-03-31T01:00:00.000Z': 1
    }
  ]
]

forEachDatabase(
  'Aggregates: date buckets in time zones, zero-filled series',
  (env) => {
    let parent: number

    before(async () => {
      await clearTables(env.server.db)
      const ids = await seedTodoItems(
        env.server.db,
        CREATED.map((created, index) => ({ title: `t${index + 1}`, created, priority: index + 1 }))
      )
      parent = ids[0]
      await seedSubTasks(
        env.server.db,
        CREATED.slice(5, 11).map((created, index) => ({ todoItemId: parent, title: `s${index}`, created }))
      )
    })

    /** The query's data, checking that it ran in one statement. */
    const query = async (document: string) => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(env.server, document)
      })
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.equal(statements, 1, 'one statement per request')
      return response.data
    }
    const counts = (entries: any[]) =>
      Object.fromEntries(entries.map((entry) => [entry.groupBy.created, entry.count.id]))

    for (const [name, expected] of Object.entries(EXPECTED)) {
      const [by, zone] = name.split(' ')
      it(`groups by ${by} in ${zone}, daylight-saving changes included`, async () => {
        const zoneArg = zone === 'UTC' ? '' : `, timeZone: "${zone}"`
        const data = await query(
          `{ todoItemAggregate { groupBy { created(by: ${by}${zoneArg}) } count { id } } }`
        )
        assert.deepEqual(counts(data.todoItemAggregate), expected)
        // Ordered by bucket.
        const starts = data.todoItemAggregate.map((entry: any) => entry.groupBy.created)
        assert.deepEqual(starts, [...starts].sort())
      })
    }

    it('groups by HOUR at the offset in force, so repeated hours are buckets of their own', async () => {
      for (const [zone, from, to, expected] of HOURS) {
        const data =
          await query(`{ todoItemAggregate(filter: {created: {between: {lower: "${from}", upper: "${to}"}}}) {
          groupBy { created(by: HOUR, timeZone: "${zone}") } count { id } } }`)
        assert.deepEqual(counts(data.todoItemAggregate), expected, zone)
      }
    })

    it('buckets relation aggregates by their time zone too', async () => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(
          env.server,
          `{ todoItem(id: ${parent}) { subTasksAggregate {
          groupBy { created(by: DAY, timeZone: "America/New_York") } count { id } } } }`
        )
      })
      assert.equal(statements, 2, 'the parent, then its relation aggregate')
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      // Sub-tasks at items 6 to 11: New York Oct 26 (2), Oct 27 (1), Nov 3 (3).
      assert.deepEqual(counts(response.data.todoItem.subTasksAggregate), {
        '2024-10-26T04:00:00.000Z': 2,
        '2024-10-27T04:00:00.000Z': 1,
        '2024-11-03T04:00:00.000Z': 3
      })
    })

    it('fills every bucket between the filter bounds with zero counts, in the zone, in one statement', async () => {
      const data =
        await query(`{ todoItemAggregate(filter: {created: {gte: "2024-10-25T22:00:00.000Z", lt: "2024-10-29T23:00:00.000Z"}}) {
        groupBy { created(by: DAY, timeZone: "Europe/Berlin", fill: {}) } count { id } avg { priority } } }`)
      assert.deepEqual(data.todoItemAggregate, [
        { groupBy: { created: '2024-10-25T22:00:00.000Z' }, count: { id: 0 }, avg: { priority: null } },
        { groupBy: { created: '2024-10-26T22:00:00.000Z' }, count: { id: 2 }, avg: { priority: 6.5 } },
        { groupBy: { created: '2024-10-27T23:00:00.000Z' }, count: { id: 1 }, avg: { priority: 8 } },
        { groupBy: { created: '2024-10-28T23:00:00.000Z' }, count: { id: 0 }, avg: { priority: null } }
      ])
    })

    it('fills between given from and to, and orders, filters and pages the filled buckets', async () => {
      const fill = 'fill: {from: "2024-11-03T03:00:00.000Z", to: "2024-11-03T07:59:00.000Z"}'
      const data = await query(
        `{ todoItemAggregate { groupBy { created(by: HOUR, timeZone: "America/New_York", ${fill}) } count { id } } }`
      )
      assert.deepEqual(counts(data.todoItemAggregate), {
        '2024-11-03T03:00:00.000Z': 0,
        '2024-11-03T04:00:00.000Z': 1,
        '2024-11-03T05:00:00.000Z': 1,
        '2024-11-03T06:00:00.000Z': 1,
        '2024-11-03T07:00:00.000Z': 0
      })
      const empty =
        await query(`{ todoItemAggregateGroups(having: {count: {id: {eq: 0}}}, sorting: [{field: created, direction: DESC}], paging: {limit: 1}) {
        nodes { groupBy { created(by: HOUR, timeZone: "America/New_York", ${fill}) } count { id } } totalCount } }`)
      assert.deepEqual(empty.todoItemAggregateGroups, {
        nodes: [{ groupBy: { created: '2024-11-03T07:00:00.000Z' }, count: { id: 0 } }],
        totalCount: 2
      })
    })

    it('refuses a fill without bounds, over the bucket limit, or with other groups; and unknown zones', async () => {
      const refused = async (document: string, field: string, message: RegExp) => {
        const response = await graphql(env.server, document)
        assert.deepEqual(codes(response), ['BAD_USER_INPUT'], document)
        assert.equal(response.errors![0].extensions.errors![0].field, field)
        assert.match(response.errors![0].message, message)
      }
      await refused(
        '{ todoItemAggregate { groupBy { created(fill: {}) } count { id } } }',
        'groupBy.0.fill',
        /needs a range/
      )
      await refused(
        '{ todoItemAggregate { groupBy { created(by: HOUR, fill: {from: "2024-01-01T00:00:00Z", to: "2024-02-01T00:00:00Z"}) } count { id } } }',
        'groupBy.0.fill',
        /more than 100 buckets \(aggregate.maxFillBuckets\)/
      )
      await refused(
        '{ todoItemAggregate { groupBy { completed created(fill: {from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z"}) } count { id } } }',
        'groupBy.1.fill',
        /grouped alone/
      )
      await refused(
        '{ todoItemAggregate { groupBy { created(timeZone: "Mars/Olympus") } count { id } } }',
        'groupBy.0.timeZone',
        /IANA/
      )
    })

    it('names the fix when the database has no data for a zone Node knows (MariaDB without its tables)', async () => {
      // MariaDB's tables, loaded from /usr/share/zoneinfo, lack the SystemV zones that Node and PostgreSQL know.
      const document =
        '{ todoItemAggregate { groupBy { completed created(timeZone: "SystemV/AST4") } count { id } } }'
      const response = await graphql(env.server, document)
      if (env.server.database === 'mysql') {
        assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
        assert.equal(response.errors![0].extensions.errors![0].field, 'groupBy.1.timeZone')
        assert.match(response.errors![0].message, /unknown to the database.*mariadb-tzinfo-to-sql/)
      } else {
        assert.equal(response.errors, undefined, JSON.stringify(response.errors))
        const total = response.data.todoItemAggregate.reduce(
          (sum: number, entry: any) => sum + entry.count.id,
          0
        )
        assert.equal(total, CREATED.length)
      }
    })
  },
  app
)
