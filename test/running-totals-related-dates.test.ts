import assert from 'node:assert/strict'
import { forEachDatabase } from './support/server'
import { codes, graphql } from './support/graphql'
import { relationOrderApp, seedRelationOrder, type ItemRow } from './support/relation-order-app'
import { headersOf, ROWS, visibleTo, type Role } from './support/relation-order-data'

/** The first instant of an instant's month in UTC, as the plugin names MONTH buckets. */
const monthOf = (instant: string) => `${instant.slice(0, 7)}-01T00:00:00.000Z`

/** How many of `records` fall in each month of `dateOf` (records without a date left out). */
function countByMonth<T>(records: T[], dateOf: (record: T) => string | undefined) {
  const counts = new Map<string, number>()
  for (const record of records) {
    const date = dateOf(record)
    if (date) counts.set(monthOf(date), (counts.get(monthOf(date)) ?? 0) + 1)
  }
  return counts
}

/**
 * The todo items the caller may read counted per month their owner joined, in calendar order, with the
 * running count; the items without a readable owner apart (their bucket is null).
 */
function itemsByOwnerMonth(role: Role) {
  const visible = visibleTo(role)
  const joined = (item: ItemRow) => visible.personOf(item.ownerId)?.joined
  const counts = countByMonth(visible.items, joined)
  const undated = visible.items.filter((item) => !joined(item)).length
  let running = 0
  const dated = [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([month, count]) => ({ month, count, running: (running += count) }))
  return { dated, undated }
}

forEachDatabase(
  'Running totals and compared buckets over related dates',
  (env) => {
    before(async function () {
      this.timeout(60000)
      await seedRelationOrder(env.server.db, ROWS)
    })

    const query = async (text: string, role: Role = 'user') => {
      const response = await graphql(env.server, text, undefined, headersOf(role))
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      return response.data
    }

    for (const role of ['user', 'admin'] as Role[]) {
      for (const direction of ['ASC', 'DESC']) {
        it(`records without a related date run apart, as ${role}, sorted ${direction}`, async () => {
          const { dated, undated } = itemsByOwnerMonth(role)
          // Items without an owner (and, for users, with a hidden one) make the null bucket.
          assert.ok(undated > 0)
          const data = await query(
            `{ todoItemAggregate(sorting: [{ path: "owner.joined", direction: ${direction} }]) {
                 groupBy { owner { joined(by: MONTH) } } count { id } running { count { id } } } }`,
            role
          )
          const answered = data.todoItemAggregate.map((group: any) => ({
            month: group.groupBy.owner.joined,
            count: group.count.id,
            running: group.running?.count.id ?? null
          }))
          const withoutDate = answered.filter((group: any) => group.month === null)
          assert.deepEqual(withoutDate, [{ month: null, count: undated, running: null }])
          const inOrder = answered.filter((group: any) => group.month !== null)
          if (direction === 'DESC') inOrder.reverse()
          assert.deepEqual(inOrder, dated)
        })
      }
    }

    it('a partition of other keys keeps its own null bucket apart', async () => {
      const visible = visibleTo('user')
      const data = await query(
        `{ todoItemAggregate { groupBy { completed owner { joined(by: MONTH) } }
             count { id } running { count { id } } } }`
      )
      for (const completed of [false, true]) {
        const items = visible.items.filter((item) => item.completed === completed)
        const months = countByMonth(items, (item) => visible.personOf(item.ownerId)?.joined)
        let running = 0
        const expected = [...months.entries()]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([month, count]) => [month, count, (running += count)])
        const answered = data.todoItemAggregate
          .filter((group: any) => group.groupBy.completed === completed && group.groupBy.owner.joined)
          .map((group: any) => [group.groupBy.owner.joined, group.count.id, group.running.count.id])
        assert.deepEqual(answered, expected, `completed: ${completed}`)
        const undated = data.todoItemAggregate.find(
          (group: any) => group.groupBy.completed === completed && group.groupBy.owner.joined === null
        )
        const expectedUndated = items.filter((item) => !visible.personOf(item.ownerId)).length
        assert.deepEqual(
          undated && [undated.count.id, undated.running],
          expectedUndated ? [expectedUndated, null] : undefined
        )
      }
    })

    it('previous and periodAgo over a related date read the range from the filter under the relation', async () => {
      const visible = visibleTo('admin')
      const data = await query(
        `{ todoItemAggregate(filter: { owner: { joined: { gte: "2026-01-01T00:00:00Z", lte: "2026-03-31T23:59:59Z" } } }) {
             groupBy { owner { joined(by: MONTH) } } count { id } previous { count { id } }
             periodAgo(period: QUARTER) { count { id } } } }`,
        'admin'
      )
      const counts = countByMonth(visible.items, (item) => visible.personOf(item.ownerId)?.joined)
      const months = ['2026-01', '2026-02', '2026-03'].map((month) => `${month}-01T00:00:00.000Z`)
      const expected = months
        .filter((month) => counts.has(month))
        .map((month) => {
          const before = months[months.indexOf(month) - 1]
          // January's previous month lies before the filter's range: not read, so null, not 0.
          return [month, counts.get(month), before ? (counts.get(before) ?? 0) : null, null]
        })
      assert.deepEqual(
        data.todoItemAggregate.map((group: any) => [
          group.groupBy.owner.joined,
          group.count.id,
          group.previous && group.previous.count.id,
          group.periodAgo
        ]),
        expected
      )
    })

    it("a self relation's date takes its range from the filter under the relation, not the record's own", async () => {
      const visible = visibleTo('admin')
      const ownRange = '{ joined: { gte: "2026-01-01T00:00:00Z", lte: "2026-03-31T23:59:59Z" } }'
      const refused = await graphql(
        env.server,
        `{ personAggregate(filter: ${ownRange}) {
             groupBy { mentor { joined(by: MONTH) } } count { id } previous { count { id } } } }`,
        undefined,
        headersOf('admin')
      )
      assert.deepEqual(codes(refused), ['BAD_USER_INPUT'])
      assert.match(refused.errors![0].message, /previous/)
      assert.match(refused.errors![0].message, /joined/)
      const data = await query(
        `{ personAggregate(filter: { mentor: ${ownRange} }) {
             groupBy { mentor { joined(by: MONTH) } } count { id } previous { count { id } } } }`,
        'admin'
      )
      const counts = countByMonth(visible.people, (person) => visible.personOf(person.mentorId)?.joined)
      const months = ['2026-01', '2026-02', '2026-03'].map((month) => `${month}-01T00:00:00.000Z`)
      assert.deepEqual(
        data.personAggregate.map((group: any) => [
          group.groupBy.mentor.joined,
          group.count.id,
          group.previous && group.previous.count.id
        ]),
        months
          .filter((month) => counts.has(month))
          .map((month) => {
            const before = months[months.indexOf(month) - 1]
            return [month, counts.get(month), before ? (counts.get(before) ?? 0) : null]
          })
      )
    })
  },
  relationOrderApp
)
