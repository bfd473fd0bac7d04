import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { graphqlCounted } from './support/graphql'
import { relationOrderApp, seedRelationOrder } from './support/relation-order-app'
import { headersOf, ROWS, visibleTo, type Role } from './support/relation-order-data'

/**
 * Issue 42's "done when": a dashboard's usual questions are one request each, answered alike on every
 * database. Each answer is worked out here in JS from the seeded rows and what the caller may read of them.
 */

/** When each todo item was created: items spread over January to March, so months can be compared. */
const CREATED: Record<number, string> = {
  1: '2026-01-10T09:00:00.000Z',
  2: '2026-01-20T09:00:00.000Z',
  3: '2026-02-03T09:00:00.000Z',
  4: '2026-02-14T09:00:00.000Z',
  5: '2026-02-28T23:30:00.000Z',
  6: '2026-03-01T08:00:00.000Z',
  7: '2026-03-02T09:00:00.000Z',
  8: '2026-03-03T09:00:00.000Z',
  9: '2026-03-15T09:00:00.000Z',
  10: '2026-03-20T09:00:00.000Z',
  11: '2026-03-31T22:30:00.000Z'
}

/** PostgreSQL's percentile_cont: linear interpolation between the closest ranks of the sorted values. */
function percentile(values: number[], p: number) {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const position = p * (sorted.length - 1)
  const lower = Math.floor(position)
  const upper = Math.ceil(position)
  return sorted[lower] + (position - lower) * (sorted[upper] - sorted[lower])
}

/** The month an instant falls in, in a time zone, as `YYYY-MM`. */
function monthIn(instant: string, timeZone: string) {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit' })
    .format(new Date(instant))
    .slice(0, 7)
}

forEachDatabase(
  "A dashboard's questions, one request each",
  (env) => {
    before(async function () {
      this.timeout(60000)
      await seedRelationOrder(env.server.db, ROWS)
      for (const [id, created] of Object.entries(CREATED)) {
        await env.server
          .db('todo_items')
          .where('id', Number(id))
          .update({ created: new Date(created) })
      }
    })

    /** The request's data, and how many SQL statements answering it took. */
    const ask = (text: string, role: Role) => graphqlCounted(env.server, text, { headers: headersOf(role) })

    for (const role of ['user', 'admin'] as Role[]) {
      describe(`as ${role}`, () => {
        const visible = visibleTo(role)

        it('per-owner totals: open items and their priorities per owner name', async () => {
          const { data, statements } = await ask(
            `{ todoItemAggregate(filter: { completed: { is: false } }) {
                 groupBy { owner { name } } count { id } sum { priority } } }`,
            role
          )
          assert.equal(statements, 1)
          const totals = new Map<string | null, { count: number; sum: number }>()
          for (const item of visible.items.filter((row) => !row.completed)) {
            const name = visible.personOf(item.ownerId)?.name ?? null
            const total = totals.get(name) ?? { count: 0, sum: 0 }
            total.count++
            total.sum += item.priority
            totals.set(name, total)
          }
          const expected = [...totals.entries()]
            .sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : a < b ? -1 : 1))
            .map(([name, total]) => ({
              groupBy: { owner: { name } },
              count: { id: total.count },
              sum: { priority: total.sum }
            }))
          assert.deepEqual(data.todoItemAggregate, expected)
        })

        it('the slowest 5%: the 95th percentile of sub-task points, and the median', async () => {
          const { data, statements } = await ask(
            '{ subTaskAggregate { p95: percentile(p: 0.95) { points } median { points } count { id } } }',
            role
          )
          assert.equal(statements, 1)
          const points = visible.subTasks.map((task) => task.points).filter((value) => value !== null)
          const [answer] = data.subTaskAggregate
          assert.equal(answer.count.id, visible.subTasks.length)
          assert.ok(Math.abs(answer.p95.points - percentile(points, 0.95)!) < 1e-9, JSON.stringify(answer))
          assert.ok(Math.abs(answer.median.points - percentile(points, 0.5)!) < 1e-9, JSON.stringify(answer))
        })

        it('this month against last month: items created per month of 2026 in Berlin, with the month before', async () => {
          const { data, statements } = await ask(
            `{ todoItemAggregate(filter: { created: { gte: "2026-01-31T23:00:00Z", lt: "2026-03-31T22:00:00Z" } }) {
                 groupBy { created(by: MONTH, timeZone: "Europe/Berlin") }
                 count { id } previous { count { id } } } }`,
            role
          )
          assert.equal(statements, 1)
          const from = Date.parse('2026-01-31T23:00:00Z')
          const to = Date.parse('2026-03-31T22:00:00Z')
          const perMonth = new Map<string, number>()
          for (const item of visible.items) {
            const at = Date.parse(CREATED[item.id])
            if (at < from || at >= to) continue
            const month = monthIn(CREATED[item.id], 'Europe/Berlin')
            perMonth.set(month, (perMonth.get(month) ?? 0) + 1)
          }
          const answered = data.todoItemAggregate.map((group: any) => ({
            month: monthIn(group.groupBy.created, 'Europe/Berlin'),
            count: group.count.id,
            previous: group.previous?.count.id ?? null
          }))
          // January lies outside the filter's range: its count was not read, so it is unknown, not 0.
          assert.deepEqual(answered, [
            { month: '2026-02', count: perMonth.get('2026-02') ?? 0, previous: null },
            {
              month: '2026-03',
              count: perMonth.get('2026-03') ?? 0,
              previous: perMonth.get('2026-02') ?? 0
            }
          ])
        })

        it('the items with no open sub-task, most sub-tasks first', async () => {
          const { data, statements } = await ask(
            `{ todoItems(filter: { subTasksNone: { completed: { is: false } } },
                         sorting: [{ path: "subTasks", aggregate: COUNT, direction: DESC }, { field: id, direction: ASC }],
                         paging: { first: 50 }) {
                 edges { node { id } } } }`,
            role
          )
          assert.ok(statements <= 2, `${statements} statements`)
          const openIn = (id: number) =>
            visible.subTasks.some((task) => task.todoItemId === id && !task.completed)
          const tasksOf = (id: number) => visible.subTasks.filter((task) => task.todoItemId === id).length
          const expected = visible.items
            .filter((item) => !openIn(item.id))
            .sort((a, b) => tasksOf(b.id) - tasksOf(a.id) || a.id - b.id)
            .map((item) => item.id)
          assert.deepEqual(
            data.todoItems.edges.map((edge: any) => Number(edge.node.id)),
            expected
          )
        })
      })
    }
  },
  relationOrderApp
)
