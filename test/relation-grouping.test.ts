import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import { forEachDatabase } from './support/server'
import { codes, graphql } from './support/graphql'
import { relationOrderApp, seedRelationOrder } from './support/relation-order-app'
import { compareValues, headersOf, ROWS, visibleTo, type Role } from './support/relation-order-data'

type Group = { key: unknown[]; count: number; sum: number | null }

/** Groups rows by `keyOf` in JS: count of rows and sum of `valueOf` (null without values), keys ascending. */
function groupRows<T>(
  rows: T[],
  keyOf: (row: T) => unknown[],
  valueOf: (row: T) => number | null = () => null
) {
  const groups = new Map<string, Group>()
  for (const row of rows) {
    const key = keyOf(row)
    const id = JSON.stringify(key)
    const group = groups.get(id) ?? { key, count: 0, sum: null }
    group.count++
    const value = valueOf(row)
    if (value !== null) group.sum = (group.sum ?? 0) + value
    groups.set(id, group)
  }
  return [...groups.values()].sort((a, b) => {
    for (let index = 0; index < a.key.length; index++) {
      const order = compareValues(a.key[index], b.key[index])
      if (order) return order
    }
    return 0
  })
}

/** Each sub-task the caller may read with its todo item and that item's owner, as far as the caller may read them. */
function subTasksWithRelations(role: Role) {
  const visible = visibleTo(role)
  return visible.subTasks.map((task) => {
    const item = visible.itemOf(task.todoItemId)
    return { task, item, owner: visible.personOf(item?.ownerId) }
  })
}

/** The first day of the month of an instant in a time zone, as the plugin names buckets: that day's start in UTC. */
function monthIn(instant: string, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit'
  }).formatToParts(new Date(instant))
  const year = parts.find((part) => part.type === 'year')!.value
  const month = parts.find((part) => part.type === 'month')!.value
  return `${year}-${month}`
}

forEachDatabase(
  'Grouping by fields of to-one relations',
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
      it(`one level: sub-tasks by their todo item's completed, as ${role}, in one statement`, async () => {
        let data: any
        const statements = await env.server.countStatements(async () => {
          data = await query(
            '{ subTaskAggregate { groupBy { todoItem { completed } } count { id } sum { points } } }',
            role
          )
        })
        assert.equal(statements, 1)
        const expected = groupRows(
          subTasksWithRelations(role),
          ({ item }) => [item?.completed ?? null],
          ({ task }) => task.points
        )
        assert.deepEqual(
          data.subTaskAggregate,
          expected.map((group) => ({
            groupBy: { todoItem: { completed: group.key[0] } },
            count: { id: group.count },
            sum: { points: group.sum }
          }))
        )
      })

      it(`two levels with an own field: sub-tasks by their todo item's owner's name and completed, as ${role}`, async () => {
        const data = await query(
          '{ subTaskAggregate { groupBy { completed todoItem { owner { name } } } count { id } } }',
          role
        )
        const expected = groupRows(subTasksWithRelations(role), ({ task, owner }) => [
          task.completed,
          owner?.name ?? null
        ])
        assert.deepEqual(
          data.subTaskAggregate,
          expected.map((group) => ({
            groupBy: { completed: group.key[0], todoItem: { owner: { name: group.key[1] } } },
            count: { id: group.count }
          }))
        )
        // A name the caller may not read is no group key of theirs.
        const names = data.subTaskAggregate.map((group: any) => group.groupBy.todoItem.owner.name)
        assert.equal(
          names.some((name: string | null) => name?.startsWith('secret')),
          role === 'admin'
        )
      })
    }

    it("a self relation joined twice under its own aliases: todo items by owner and owner's mentor", async () => {
      const visible = visibleTo('user')
      const data = await query(
        '{ todoItemAggregate { groupBy { owner { name mentor { name } } } count { id } } }'
      )
      const expected = groupRows(visible.items, (item) => {
        const owner = visible.personOf(item.ownerId)
        return [owner?.name ?? null, visible.personOf(owner?.mentorId)?.name ?? null]
      })
      assert.deepEqual(
        data.todoItemAggregate.map((group: any) => [
          group.groupBy.owner.name,
          group.groupBy.owner.mentor.name,
          group.count.id
        ]),
        expected.map((group) => [...group.key, group.count])
      )
    })

    it('a related date in buckets of a time zone, sorted and filtered by having on the relation key', async () => {
      const visible = visibleTo('admin')
      const zone = 'Europe/Berlin'
      const data = await query(
        `{ todoItemAggregate(
             sorting: [{ path: "owner.joined", direction: DESC }]
             having: { count: { id: { gte: 2 } } }
           ) { groupBy { owner { joined(by: MONTH, timeZone: "${zone}") } } count { id } } }`,
        'admin'
      )
      const expected = groupRows(visible.items, (item) => {
        const owner = visible.personOf(item.ownerId)
        return [owner ? monthIn(owner.joined, zone) : null]
      })
        .filter((group) => group.count >= 2)
        .sort((a, b) => compareValues(a.key[0], b.key[0], 'DESC'))
      assert.deepEqual(
        data.todoItemAggregate.map((group: any) => [
          group.groupBy.owner.joined && monthIn(group.groupBy.owner.joined, zone),
          group.count.id
        ]),
        expected.map((group) => [group.key[0], group.count])
      )
      // Sam joined on 31 January in UTC, which is February in Berlin.
      assert.ok(expected.some((group) => group.key[0] === '2026-02'))
    })

    it('GraphQL fill over a related date; relation aggregates grouped by a related field, per parent', async () => {
      const visible = visibleTo('user')
      const data = await query(
        `{ todoItemAggregate(filter: { owner: { joined: { gte: "2026-01-01T00:00:00Z", lt: "2026-04-01T00:00:00Z" } } }) {
             groupBy { owner { joined(by: MONTH, fill: {}) } } count { id } }
           todoItems(sorting: [{ field: id, direction: ASC }], paging: { first: 50 }) { edges { node { id
             subTasksAggregate { groupBy { todoItem { owner { name } } } count { id } } } } } }`
      )
      const months = new Map<string, number>()
      for (const item of visible.items) {
        const joined = visible.personOf(item.ownerId)?.joined.slice(0, 7)
        if (joined) months.set(joined, (months.get(joined) ?? 0) + 1)
      }
      assert.deepEqual(
        data.todoItemAggregate.map((group: any) => [group.groupBy.owner.joined, group.count.id]),
        ['01', '02', '03'].map((month) => [
          `2026-${month}-01T00:00:00.000Z`,
          months.get(`2026-${month}`) ?? 0
        ])
      )
      for (const edge of data.todoItems.edges) {
        const item = visible.items.find((candidate) => String(candidate.id) === edge.node.id)!
        const count = visible.subTasks.filter((task) => task.todoItemId === item.id).length
        const owner = visible.personOf(item.ownerId)?.name ?? null
        assert.deepEqual(
          edge.node.subTasksAggregate,
          count ? [{ groupBy: { todoItem: { owner: { name: owner } } }, count: { id: count } }] : [],
          item.title
        )
      }
    })

    it('REST: groupBy, sort and fill by related fields, CSV columns nested by path', async () => {
      const visible = visibleTo('user')
      const response = await env.server.http(
        'GET',
        '/sub-tasks/aggregate?groupBy=todoItem.owner.name&count=id&sort=-count.id,todoItem.owner.name'
      )
      assert.equal(response.status, 200, response.text)
      const expected = groupRows(subTasksWithRelations('user'), ({ owner }) => [owner?.name ?? null]).sort(
        (a, b) => b.count - a.count || compareValues(a.key[0], b.key[0])
      )
      assert.deepEqual(
        response.body.nodes,
        expected.map((group) => ({
          groupBy: { todoItem: { owner: { name: group.key[0] } } },
          count: { id: group.count }
        }))
      )
      const csv = await env.server.http('GET', '/todo-items/aggregate?groupBy=owner.name&count=id&format=csv')
      const lines = csv.text.trim().split('\n')
      assert.equal(lines[0], '"groupBy.owner.name","count.id"')
      const byOwner = groupRows(visible.items, (item) => [visible.personOf(item.ownerId)?.name ?? null])
      assert.deepEqual(
        lines.slice(1),
        byOwner.map((group) => `${group.key[0] === null ? '' : `"${group.key[0]}"`},${group.count}`)
      )
      // Zero fill over a related date: every month from January to April, months without owners joining 0.
      const filled = await env.server.http(
        'GET',
        '/todo-items/aggregate?groupBy=owner.joined:MONTH&count=id&fill=true&from=2026-01-01T00:00:00Z&to=2026-04-30T00:00:00Z&owner.joined=2026-01-01T00:00:00Z'
      )
      assert.equal(filled.status, 400, 'owner.joined is no equality parameter')
      const months = await env.server.http(
        'GET',
        '/todo-items/aggregate?groupBy=owner.joined:MONTH&count=id&fill=true&from=2026-01-01T00:00:00Z&to=2026-04-30T00:00:00Z'
      )
      assert.equal(months.status, 200, months.text)
      const perMonth = new Map<string, number>()
      for (const item of visible.items) {
        const owner = visible.personOf(item.ownerId)
        if (owner) perMonth.set(owner.joined.slice(0, 7), (perMonth.get(owner.joined.slice(0, 7)) ?? 0) + 1)
      }
      assert.deepEqual(
        months.body.nodes.map((node: any) => [node.groupBy.owner.joined, node.count.id]),
        ['01', '02', '03', '04'].map((month) => [
          `2026-${month}-01T00:00:00.000Z`,
          perMonth.get(`2026-${month}`) ?? 0
        ])
      )
    })

    it('a Feathers client: aggregate grouped by a related field, scoped by the related authorize', async () => {
      const client = feathers()
      client.configure(
        restClient(env.server.baseUrl).fetch(fetch, { headers: { 'x-query-syntax': 'feathers' } })
      )
      const subTasks = (client.service('sub-tasks') as any).methods('aggregate')
      const groups = await subTasks.aggregate({ groupBy: [{ field: 'todoItem.title' }], count: ['id'] })
      const expected = groupRows(subTasksWithRelations('user'), ({ item }) => [item?.title ?? null])
      assert.deepEqual(
        groups,
        expected.map((group) => ({
          groupBy: { todoItem: { title: group.key[0] } },
          count: { id: group.count }
        }))
      )
      assert.ok(!groups.some((group: any) => group.groupBy.todoItem.title?.startsWith('secret')))
    })

    const refused = async (groupBy: string, resource = 'sub-tasks') => {
      const response = await env.server.http('GET', `/${resource}/aggregate?groupBy=${groupBy}&count=id`)
      assert.equal(response.status, 400, response.text)
      return response.body.errors
    }

    it('400s naming the entry: unknown relation, to-many relation, hidden or non-groupable field, too deep', async () => {
      assert.deepEqual(await refused('todoItemz.title'), [
        { field: 'groupBy.0.field', message: 'SubTask has no relation "todoItemz"' }
      ])
      assert.deepEqual(await refused('subTasks.title', 'todo-items'), [
        {
          field: 'groupBy.0.field',
          message: 'subTasks is a to-many relation: only to-one relations lead to one value per record'
        }
      ])
      assert.deepEqual(await refused('todoItem.owner.badge'), [
        { field: 'groupBy.0.field', message: 'Person.badge cannot be grouped by' }
      ])
      assert.deepEqual(await refused('todoItem.owner.nickname'), [
        { field: 'groupBy.0.field', message: 'Person.nickname cannot be grouped by' }
      ])
      assert.deepEqual(await refused('todoItem.owner.mentor.mentor.name'), [
        { field: 'groupBy.0.field', message: 'goes through more than 3 relations (limits.maxRelationDepth)' }
      ])
      assert.deepEqual(await refused('todoItem.nothing'), [
        { field: 'groupBy.0.field', message: 'TodoItem has no field "nothing"' }
      ])
      // GraphQL offers what can be grouped: the hidden badge is not in the related group type.
      const response = await graphql(
        env.server,
        '{ subTaskAggregate { groupBy { todoItem { owner { badge } } } } }'
      )
      assert.deepEqual(codes(response), ['GRAPHQL_VALIDATION_FAILED'])
    })
  },
  relationOrderApp
)
