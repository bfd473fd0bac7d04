import assert from 'node:assert/strict'
import { BadRequest } from '@feathersjs/errors'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { createAggregateFixtureApp } from './support/aggregate-fixture-app'
import { clearTables, seedSubTasks, seedTodoItems } from './support/seed'
import { codes, graphql, graphqlCounted } from './support/graphql'
import { parseCsv } from './support/csv'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'
import type { ResourceService } from '../src/service/resource-service'

const app = exampleResourcesApp({
  quietErrors: true,
  resources: [{ ...todoItemResource, aggregate: { maxFillBuckets: 100 } }, subTaskResource, ...tagResources]
})

const ZONE = 'Europe/Berlin'

/** Around Berlin's change to summer time (2024-03-31 at 01:00 UTC); the comments give local times. */
const ITEMS = [
  { created: '2024-03-25T10:00:00.000Z', completed: false, priority: 1 }, // Mon Mar 25 11:00 CET
  { created: '2024-03-25T12:00:00.000Z', completed: true, priority: 2 }, //  Mar 25 13:00
  { created: '2024-03-27T09:00:00.000Z', completed: false, priority: 3 }, // Mar 27 10:00
  { created: '2024-03-30T09:15:00.000Z', completed: false, priority: 4 }, // Sat Mar 30 10:15 CET
  { created: '2024-03-30T23:30:00.000Z', completed: true, priority: 5 }, //  Sun Mar 31 00:30 CET
  { created: '2024-03-31T08:20:00.000Z', completed: false, priority: 6 }, // Mar 31 10:20 CEST
  { created: '2024-04-01T08:40:00.000Z', completed: true, priority: 7 }, //  Apr 1 10:40 CEST
  { created: '2024-04-03T21:59:00.000Z', completed: false, priority: 8 }, // Apr 3 23:59
  { created: '2024-04-03T22:00:00.000Z', completed: false, priority: 9 }, // Apr 4 00:00
  { created: '2024-04-06T10:00:00.000Z', completed: true, priority: 10 }, // Sat Apr 6 12:00
  { created: '2023-04-02T10:00:00.000Z', completed: false, priority: 11 }, // a year earlier, April
  { created: '2023-03-15T10:00:00.000Z', completed: true, priority: 12 } //  a year earlier, March
]

type Item = (typeof ITEMS)[number]
type Bucket = 'HOUR' | 'DAY' | 'MONTH'

/** The local calendar label of an instant in ZONE, computed with Intl: the test's own bucketing. */
function label(instant: string | number, by: Bucket) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: ZONE,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23'
    })
      .formatToParts(new Date(instant))
      .map((part) => [part.type, part.value])
  )
  const day = `${parts.year}-${parts.month}-${parts.day}`
  return by === 'HOUR' ? `${day} ${parts.hour}` : by === 'DAY' ? day : day.slice(0, 7)
}

/** A label moved back on the wall calendar (no time zone involved: the label is local already). */
function back(value: string, by: Bucket, { months = 0, days = 0, hours = 0 }) {
  const [date, hour = '00'] = value.split(' ')
  const [year, month, day = '01'] = date.split('-').map(Number) as number[]
  const moved = new Date(Date.UTC(year, month - 1 - months, Number(day) - days, Number(hour) - hours))
  const iso = moved.toISOString()
  return by === 'HOUR'
    ? `${iso.slice(0, 10)} ${iso.slice(11, 13)}`
    : by === 'DAY'
      ? iso.slice(0, 10)
      : iso.slice(0, 7)
}

/**
 * The expected answer for one group, computed from the seeded rows selected by `within`. A compared bucket
 * before `first`, the range's first bucket, was not read: it answers null.
 */
function oracle(
  items: Item[],
  by: Bucket,
  earlier: { months?: number; days?: number; hours?: number },
  first?: string
) {
  const of = (wanted: (item: Item) => boolean) => {
    const chosen = items.filter(wanted)
    return {
      count: { id: chosen.length },
      sum: { priority: chosen.length ? chosen.reduce((total, item) => total + item.priority, 0) : null }
    }
  }
  return (bucket: string, completed?: boolean) => {
    const same = (item: Item) => completed === undefined || item.completed === completed
    const previous = by === 'HOUR' ? { hours: 1 } : by === 'DAY' ? { days: 1 } : { months: 1 }
    const compared = (wanted: string) =>
      first !== undefined && wanted < first
        ? null
        : of((item) => same(item) && label(item.created, by) === wanted)
    return {
      ...of((item) => same(item) && label(item.created, by) === bucket),
      running: of((item) => same(item) && label(item.created, by) <= bucket),
      previous: compared(back(bucket, by, previous)),
      periodAgo: compared(back(bucket, by, earlier))
    }
  }
}

const inRange = (from: string, to: string) => (item: Item) =>
  Date.parse(item.created) >= Date.parse(from) && Date.parse(item.created) <= Date.parse(to)

/** Two weeks of days in Berlin: Mon Mar 25 00:00 CET to Sun Apr 7 23:59:59 CEST. */
const FROM = '2024-03-24T23:00:00.000Z'
const TO = '2024-04-07T21:59:59.999Z'
const VALUES = 'count { id } sum { priority }'
const SERIES = `running { ${VALUES} } previous { ${VALUES} } periodAgo(period: WEEK) { ${VALUES} }`

forEachDatabase(
  'Aggregates: running totals and period-over-period over date buckets',
  (env) => {
    let parents: number[]
    before(async () => {
      await clearTables(env.server.db)
      parents = await seedTodoItems(
        env.server.db,
        ITEMS.map((item, index) => ({ title: `t${index + 1}`, ...item }))
      )
      // Sub-tasks of the first two items on the items' own instants: each parent's running count restarts.
      await seedSubTasks(env.server.db, [
        ...ITEMS.slice(0, 6).map((item, index) => ({
          todoItemId: parents[0],
          title: `a${index}`,
          created: item.created
        })),
        ...ITEMS.slice(3, 9).map((item, index) => ({
          todoItemId: parents[1],
          title: `b${index}`,
          created: item.created
        }))
      ])
    })

    /** The query's data, checking that it ran in one statement (or `expected`). */
    const query = async (document: string, expected = 1) => {
      const { data, statements } = await graphqlCounted(env.server, document)
      assert.equal(statements, expected, 'one statement per request')
      return data
    }
    const filter = `filter: { created: { between: { lower: "${FROM}", upper: "${TO}" } } }`
    const byDay = `created(by: DAY, timeZone: "${ZONE}")`
    const selected = ITEMS.filter(inRange(FROM, TO))
    const expectDay = oracle(selected, 'DAY', { days: 7 }, label(FROM, 'DAY'))

    it('answers running values, the previous day and the day a week earlier per completed, across DST', async () => {
      const data = await query(
        `{ todoItemAggregate(${filter}) { groupBy { completed ${byDay} } ${VALUES} ${SERIES} } }`
      )
      const entries = data.todoItemAggregate
      const groups = entries.map((entry: any) => [
        entry.groupBy.completed,
        label(entry.groupBy.created, 'DAY')
      ])
      const seeded = [...new Set(selected.map((item) => `${item.completed}|${label(item.created, 'DAY')}`))]
        .map((key) => key.split('|'))
        .map(([completed, day]) => [completed === 'true', day])
        .sort((a, b) => Number(a[0]) - Number(b[0]) || String(a[1]).localeCompare(String(b[1])))
      assert.deepEqual(groups, seeded, 'the groups with records, ordered by completed then day')
      for (const entry of entries) {
        const { groupBy, ...values } = entry
        assert.deepEqual(
          values,
          expectDay(label(groupBy.created, 'DAY'), groupBy.completed),
          JSON.stringify(groupBy)
        )
      }
      // The 23-hour day: Sunday Mar 31 holds items 5 (00:30 CET) and 6 (10:20 CEST).
      const sunday = entries.filter((entry: any) => label(entry.groupBy.created, 'DAY') === '2024-03-31')
      assert.equal(sunday.length, 2)
    })

    it('fills the gaps: every day of the series, previous of a day after a gap is 0', async () => {
      const data = await query(
        `{ todoItemAggregate(${filter}) { groupBy { created(by: DAY, timeZone: "${ZONE}", fill: {}) } ${VALUES} ${SERIES} } }`
      )
      const days = data.todoItemAggregate.map((entry: any) => label(entry.groupBy.created, 'DAY'))
      assert.equal(days.length, 14)
      assert.equal(days[0], '2024-03-25')
      assert.equal(days[13], '2024-04-07')
      for (const entry of data.todoItemAggregate) {
        const { groupBy, ...values } = entry
        assert.deepEqual(values, expectDay(label(groupBy.created, 'DAY')), JSON.stringify(groupBy))
      }
      const tuesday = data.todoItemAggregate[1]
      assert.deepEqual([tuesday.count.id, tuesday.previous.count.id, tuesday.running.count.id], [0, 2, 2])
    })

    it('pages the groups with the running values of the whole series', async () => {
      const whole = await query(
        `{ todoItemAggregate(${filter}) { groupBy { completed ${byDay} } ${VALUES} ${SERIES} } }`
      )
      const pages: any[] = []
      for (let offset = 0; offset < whole.todoItemAggregate.length; offset += 3) {
        const data = await query(
          `{ todoItemAggregateGroups(${filter}, paging: {limit: 3, offset: ${offset}}) { nodes { groupBy { completed ${byDay} } ${VALUES} ${SERIES} } } }`
        )
        pages.push(...data.todoItemAggregateGroups.nodes)
      }
      assert.deepEqual(pages, whole.todoItemAggregate)
    })

    it('filters groups by having after the running values, which still count the groups it drops', async () => {
      const data = await query(
        `{ todoItemAggregate(${filter}, having: { count: { id: { gt: 1 } } }) { groupBy { ${byDay} } ${VALUES} ${SERIES} } }`
      )
      const days = [...new Set(selected.map((item) => label(item.created, 'DAY')))].filter(
        (day) => selected.filter((item) => label(item.created, 'DAY') === day).length > 1
      )
      assert.deepEqual(
        data.todoItemAggregate.map((entry: any) => label(entry.groupBy.created, 'DAY')),
        days.sort()
      )
      for (const entry of data.todoItemAggregate) {
        const { groupBy, ...values } = entry
        assert.deepEqual(values, expectDay(label(groupBy.created, 'DAY')))
      }
    })

    it('sorts the groups by an aggregate, running values still in calendar order', async () => {
      const data = await query(
        `{ todoItemAggregate(${filter}, sorting: [{field: priority, aggregate: SUM, direction: DESC}]) { groupBy { ${byDay} } ${VALUES} running { count { id } } } }`
      )
      const sums = data.todoItemAggregate.map((entry: any) => entry.sum.priority)
      assert.deepEqual(
        sums,
        [...sums].sort((a, b) => b - a)
      )
      for (const entry of data.todoItemAggregate) {
        assert.deepEqual(entry.running, {
          count: expectDay(label(entry.groupBy.created, 'DAY')).running.count
        })
      }
    })

    it('runs without a range: every month in UTC, no filter, per completed', async () => {
      // No item lies near a month's end, so Berlin's month labels are UTC's too.
      const data = await query(
        `{ todoItemAggregate { groupBy { completed created(by: MONTH) } count { id } running { ${VALUES} } } }`
      )
      const expect = oracle(ITEMS, 'MONTH', { months: 12 })
      const groups = new Set(ITEMS.map((item) => `${item.completed} ${label(item.created, 'MONTH')}`))
      assert.equal(data.todoItemAggregate.length, groups.size)
      for (const entry of data.todoItemAggregate) {
        const expected = expect(label(entry.groupBy.created, 'MONTH'), entry.groupBy.completed)
        assert.deepEqual(entry.count, expected.count)
        assert.deepEqual(entry.running, expected.running)
      }
    })

    it('compares an HOUR with the same hour on the clock a day earlier, across the 23-hour day', async () => {
      const from = '2024-03-29T23:00:00.000Z'
      const to = '2024-04-01T21:59:59.999Z'
      const data = await query(
        `{ todoItemAggregate(filter: { created: { gte: "${from}", lte: "${to}" } }) { groupBy { created(by: HOUR, timeZone: "${ZONE}") } ${VALUES} running { ${VALUES} } previous { ${VALUES} } periodAgo(period: DAY) { ${VALUES} } } }`
      )
      const expect = oracle(ITEMS.filter(inRange(from, to)), 'HOUR', { days: 1 }, label(from, 'HOUR'))
      for (const entry of data.todoItemAggregate) {
        const { groupBy, ...values } = entry
        assert.deepEqual(values, expect(label(groupBy.created, 'HOUR')), label(groupBy.created, 'HOUR'))
      }
      // Mar 31 10:00 CEST against Mar 30 10:00 CET: 23 hours apart, item 4 in it.
      const sunday = data.todoItemAggregate.find(
        (entry: any) => label(entry.groupBy.created, 'HOUR') === '2024-03-31 10'
      )
      assert.equal(sunday.periodAgo.count.id, 1)
    })

    it('compares a MONTH with the same month a year earlier, within the records the filter selects', async () => {
      const from = '2023-02-28T23:00:00.000Z'
      const to = '2024-04-30T21:59:59.999Z'
      const data = await query(
        `{ todoItemAggregate(filter: { created: { gte: "${from}", lte: "${to}" }, or: [{ created: { gte: "2024-01-01T00:00:00Z" } }, { completed: { is: true } }] }) { groupBy { created(by: MONTH, timeZone: "${ZONE}") } ${VALUES} running { ${VALUES} } previous { ${VALUES} } periodAgo(period: YEAR) { ${VALUES} } } }`
      )
      // April 2023's item is not completed, so the filter leaves it out: April 2024 compares with 0.
      const within = ITEMS.filter(inRange(from, to)).filter(
        (item) => Date.parse(item.created) >= Date.parse('2024-01-01T00:00:00Z') || item.completed
      )
      const expect = oracle(within, 'MONTH', { months: 12 }, label(from, 'MONTH'))
      const months = data.todoItemAggregate.map((entry: any) => label(entry.groupBy.created, 'MONTH'))
      assert.deepEqual(months, ['2023-03', '2024-03', '2024-04'])
      for (const entry of data.todoItemAggregate) {
        const { groupBy, ...values } = entry
        assert.deepEqual(values, expect(label(groupBy.created, 'MONTH')))
      }
      assert.equal(data.todoItemAggregate[1].periodAgo.count.id, 1)
      assert.equal(data.todoItemAggregate[2].periodAgo.count.id, 0)
    })

    it('answers per parent on relation aggregates, every parent in one statement', async () => {
      const data = await query(
        `{ todoItems(filter: { title: { in: ["t1", "t2", "t3"] } }, sorting: [{field: id, direction: ASC}]) { edges { node { id subTasksAggregate(${filter}) { groupBy { ${byDay} } count { id } running { count { id } } previous { count { id } } periodAgo(period: WEEK) { count { id } } } } } } }`,
        2 // the parents, then one statement for every parent's aggregates
      )
      const nodes = data.todoItems.edges.map((edge: any) => edge.node)
      const childrenOf = [ITEMS.slice(0, 6), ITEMS.slice(3, 9), []]
      nodes.forEach((node: any, index: number) => {
        const expect = oracle(
          childrenOf[index].filter(inRange(FROM, TO)),
          'DAY',
          { days: 7 },
          label(FROM, 'DAY')
        )
        const days = [...new Set(childrenOf[index].map((item) => label(item.created, 'DAY')))].sort()
        assert.deepEqual(
          node.subTasksAggregate.map((entry: any) => label(entry.groupBy.created, 'DAY')),
          days
        )
        for (const entry of node.subTasksAggregate) {
          const { groupBy, ...values } = entry
          const expected = expect(label(groupBy.created, 'DAY'))
          const counts = {
            count: expected.count,
            running: { count: expected.running.count },
            previous: expected.previous && { count: expected.previous.count },
            periodAgo: expected.periodAgo && { count: expected.periodAgo.count }
          }
          assert.deepEqual(values, counts, `parent ${index}`)
        }
      })
    })

    it('answers the same over REST, as JSON and CSV columns, and through the service', async () => {
      const params =
        `fill=true&from=${FROM}&to=${TO}&groupBy=created:DAY&timeZone=${ZONE}` +
        '&count=id&sum=priority&running=count.id,sum.priority&previous=count.id&periodAgo=sum.priority&period=WEEK'
      const json = await env.server.http('GET', `/todo-items/aggregate?${params}`)
      assert.equal(json.status, 200, JSON.stringify(json.body))
      for (const node of json.body.nodes) {
        const expected = expectDay(label(node.groupBy.created, 'DAY'))
        assert.deepEqual(node.running, expected.running)
        assert.deepEqual(node.previous, expected.previous && { count: expected.previous.count })
        assert.deepEqual(node.periodAgo, expected.periodAgo && { sum: expected.periodAgo.sum })
      }
      const csv = await env.server.http('GET', `/todo-items/aggregate?${params}&format=csv`)
      const { header, records } = parseCsv(csv.text)
      assert.equal(json.body.nodes.length, 14)
      assert.deepEqual(header, [
        'groupBy.created',
        'count.id',
        'sum.priority',
        'running.count.id',
        'running.sum.priority',
        'previous.count.id',
        'periodAgo.sum.priority'
      ])
      assert.equal(records.length, json.body.nodes.length)
      assert.equal(Number(records.at(-1)!['running.count.id']), json.body.nodes.at(-1).running.count.id)

      const service = env.server.app.service('todo-items') as unknown as ResourceService
      const answer = (await service.aggregate(
        {
          groupBy: [{ field: 'created', by: 'DAY', timeZone: ZONE }],
          count: ['id'],
          running: { count: ['id'] },
          previous: { count: ['id'] },
          periodAgo: { period: 'WEEK', count: ['id'] }
        },
        { queryModel: true, query: { filter: { created: { gte: FROM, lte: TO } } } } as never
      )) as any[]
      for (const entry of answer) {
        const expected = expectDay(label(entry.groupBy.created, 'DAY'))
        assert.deepEqual(entry.running, { count: expected.running.count })
        assert.deepEqual(entry.previous, expected.previous && { count: expected.previous.count })
        assert.deepEqual(entry.periodAgo, expected.periodAgo && { count: expected.periodAgo.count })
      }
    })

    it('refuses, naming the path: no date bucket, two dates, a period not longer, no range', async () => {
      const service = env.server.app.service('todo-items') as unknown as ResourceService
      const refuses = async (request: object, field: string, params: object = {}) => {
        await assert.rejects(service.aggregate(request as never, params as never), (error: any) => {
          assert.ok(error instanceof BadRequest, String(error))
          assert.ok(
            error.errors.some((entry: { field: string }) => entry.field === field),
            `${field}: ${JSON.stringify(error.errors)}`
          )
          return true
        })
      }
      const ranged = { queryModel: true, query: { filter: { created: { gte: FROM, lte: TO } } } }
      await refuses({ groupBy: [{ field: 'completed' }], running: { count: ['id'] } }, 'running')
      await refuses(
        {
          groupBy: [
            { field: 'created', by: 'DAY' },
            { field: 'updated', by: 'DAY' }
          ],
          previous: { count: ['id'] }
        },
        'previous',
        ranged
      )
      await refuses(
        { groupBy: [{ field: 'created', by: 'MONTH' }], periodAgo: { period: 'WEEK', count: ['id'] } },
        'periodAgo.period',
        ranged
      )
      await refuses(
        { groupBy: [{ field: 'created', by: 'WEEK' }], periodAgo: { period: 'MONTH', count: ['id'] } },
        'periodAgo.period',
        ranged
      )
      await refuses({ groupBy: [{ field: 'created', by: 'DAY' }], previous: { count: ['id'] } }, 'previous')
      await refuses(
        { groupBy: [{ field: 'created', by: 'DAY' }], running: { avg: ['priority'] } },
        'running.avg',
        ranged
      )
      await refuses(
        { groupBy: [{ field: 'created', by: 'DAY' }], running: { sum: ['title'] } },
        'running.sum.0',
        ranged
      )

      const response = await graphql(
        env.server,
        `
          {
            todoItemAggregate {
              groupBy {
                completed
              }
              running {
                count {
                  id
                }
              }
            }
          }
        `
      )
      assert.deepEqual(codes(response), ['BAD_USER_INPUT'])
      const twoPeriods = await graphql(
        env.server,
        `{ todoItemAggregate(${filter}) { groupBy { ${byDay} } week: periodAgo(period: WEEK) { count { id } } month: periodAgo(period: MONTH) { count { id } } } }`
      )
      assert.deepEqual(codes(twoPeriods), ['BAD_USER_INPUT'])
      assert.match(JSON.stringify(twoPeriods.errors), /periodAgo\.period/)
      const rest = await env.server.http(
        'GET',
        '/todo-items/aggregate?groupBy=created:DAY&periodAgo=count.id'
      )
      assert.equal(rest.status, 400)
      const period = await env.server.http(
        'GET',
        `/todo-items/aggregate?groupBy=created:MONTH&fill=true&from=${FROM}&to=${TO}&periodAgo=count.id&period=WEEK`
      )
      assert.equal(period.status, 400)
      assert.deepEqual(
        period.body.errors.map((entry: { field: string }) => entry.field),
        ['period']
      )
    })
  },
  app
)

forEachDatabase(
  'Aggregates: running totals and compared buckets see what authorize and defaultFilter let through',
  (env) => {
    /** Books published one a day in January 2026 (UTC); some another tenant's, unavailable or deleted. */
    const BOOKS = Array.from({ length: 12 }, (_, index) => ({
      id: index + 1,
      libraryId: 1,
      title: `Book ${index + 1}`,
      pages: 100,
      price: index + 1,
      published: new Date(Date.UTC(2026, 0, 1 + Math.floor(index / 2))),
      available: index % 5 !== 3,
      tenant: index % 4 === 1 ? 'other' : 'acme',
      shelf: null,
      deletedAt: index === 6 ? new Date() : null
    }))
    const visible = BOOKS.filter((book) => book.available && book.tenant === 'acme' && !book.deletedAt)

    before(async () => {
      await env.server.db('libraries').insert([{ id: 1, name: 'North' }])
      await env.server.db('books').insert(BOOKS)
    })

    it('counts only the visible books in the running, previous and week-earlier values', async () => {
      const response = await graphql(
        env.server,
        `
          {
            bookAggregate(
              filter: { published: { gte: "2026-01-01T00:00:00Z", lte: "2026-01-31T23:59:59Z" } }
            ) {
              groupBy {
                published(by: DAY)
              }
              count {
                id
              }
              running {
                count {
                  id
                }
                sum {
                  price
                }
              }
              previous {
                count {
                  id
                }
              }
            }
          }
        `,
        undefined,
        { 'x-tenant': 'acme' }
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const day = (time: Date | string) => new Date(time).toISOString().slice(0, 10)
      const days = [...new Set(visible.map((book) => day(book.published)))].sort()
      assert.deepEqual(
        response.data.bookAggregate.map((entry: any) => day(entry.groupBy.published)),
        days
      )
      for (const entry of response.data.bookAggregate) {
        const current = day(entry.groupBy.published)
        const before = new Date(Date.parse(current) - 86_400_000).toISOString().slice(0, 10)
        const upTo = visible.filter((book) => day(book.published) <= current)
        assert.deepEqual(entry.running, {
          count: { id: upTo.length },
          sum: { price: upTo.reduce((total, book) => total + book.price, 0) }
        })
        // The day before the filter's first day was not read: unknown, not 0.
        const previous =
          before < '2026-01-01'
            ? null
            : { count: { id: visible.filter((book) => day(book.published) === before).length } }
        assert.deepEqual(entry.previous, previous)
      }
    })
  },
  createAggregateFixtureApp
)

forEachDatabase('Aggregates: running totals and compared buckets through a Feathers client', (env) => {
  before(async () => {
    await clearTables(env.server.db)
    await seedTodoItems(
      env.server.db,
      ITEMS.map((item, index) => ({ title: `t${index + 1}`, ...item }))
    )
  })

  it('answers the aggregate method over @feathersjs/rest-client, in one statement', async () => {
    // Untyped, as the client tests' own: these tests send what clients send.
    const client = feathers().configure(restClient(env.server.baseUrl).fetch(fetch)) as unknown as {
      service(path: string): any
    }
    const todos = client.service('todo-items').methods('aggregate')
    let answer: any
    const statements = await env.server.countStatements(async () => {
      answer = await todos.aggregate(
        {
          groupBy: [{ field: 'completed' }, { field: 'created', by: 'DAY', timeZone: ZONE }],
          count: ['id'],
          running: { count: ['id'], sum: ['priority'] },
          previous: { count: ['id'] },
          periodAgo: { period: 'WEEK', sum: ['priority'] }
        },
        { query: { created: { $gte: FROM, $lte: TO } } }
      )
    })
    assert.equal(statements, 1)
    const expect = oracle(ITEMS.filter(inRange(FROM, TO)), 'DAY', { days: 7 }, label(FROM, 'DAY'))
    assert.ok(answer.length > 0)
    for (const entry of answer) {
      const expected = expect(label(entry.groupBy.created, 'DAY'), entry.groupBy.completed)
      assert.deepEqual(entry.running, expected.running)
      assert.deepEqual(entry.previous, expected.previous && { count: expected.previous.count })
      assert.deepEqual(entry.periodAgo, expected.periodAgo && { sum: expected.periodAgo.sum })
    }
    await assert.rejects(
      todos.aggregate({ groupBy: [{ field: 'completed' }], running: { count: ['id'] } }),
      (error: any) => error.code === 400 && error.errors.some((entry: any) => entry.field === 'running')
    )
  })
})
