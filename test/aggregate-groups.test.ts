import assert from 'node:assert/strict'
import type { HookContext } from '@feathersjs/feathers'
import type { ResourceService } from '../src'
import { forEachDatabase } from './support/server'
import { exampleResourcesApp } from './support/example-resources-app'
import { clearTables, seedTodoItems, seedSubTasks, type TodoSeed } from './support/seed'
import { codes, graphql } from './support/graphql'
import { todoItemResource } from '../example/resources/todo-item'
import { subTaskResource } from '../example/resources/sub-task'
import { tagResources } from '../example/resources'

const MAX_GROUPS = 6

/** `x-user` requests may not see the items titled "secret ...". */
const hideSecrets = (context: HookContext) =>
  context.params.headers?.['x-user'] ? { title: { notLike: 'secret%' } } : undefined

const app = exampleResourcesApp({
  quietErrors: true,
  resources: [
    { ...todoItemResource, authorize: hideSecrets, aggregate: { maxGroups: MAX_GROUPS } },
    { ...subTaskResource, aggregate: { maxGroups: MAX_GROUPS } },
    ...tagResources
  ]
})

const ITEMS: TodoSeed[] = [
  { title: 'a1', createdBy: 'ann', priority: 1 },
  { title: 'a2', createdBy: 'ann', priority: 3, completed: true },
  { title: 'a3', createdBy: 'ann', priority: 2 },
  { title: 'secret a', createdBy: 'ann', priority: 7 },
  { title: 'b1', createdBy: 'bob', priority: 2, completed: true },
  { title: 'b2', createdBy: 'bob', priority: 2 },
  { title: 'c1', createdBy: 'cid', priority: 5, completed: true },
  { title: 'd1', createdBy: 'dan', priority: 1 },
  { title: 'd2', createdBy: 'dan', priority: 1 },
  { title: 'n1', createdBy: null, priority: 4 },
  { title: 'n2', createdBy: null, priority: 0 },
  { title: 'secret e', createdBy: 'eve', priority: 9 }
]

interface Group {
  createdBy: string | null
  count: number
  avg: number
  max: number
  distinct: number
}

/**
 * The groups by creator, computed in plain JavaScript from the seed: what the database must answer. Ordered
 * by creator ascending, no creator first.
 */
function groupsOf(items: TodoSeed[]): Group[] {
  const byCreator = new Map<string | null, number[]>()
  for (const item of items) {
    const key = item.createdBy ?? null
    byCreator.set(key, [...(byCreator.get(key) ?? []), item.priority ?? 0])
  }
  return [...byCreator.entries()]
    .map(([createdBy, priorities]) => ({
      createdBy,
      count: priorities.length,
      avg: priorities.reduce((a, b) => a + b, 0) / priorities.length,
      max: Math.max(...priorities),
      distinct: new Set(priorities).size
    }))
    .sort((a, b) =>
      a.createdBy === null ? -1 : b.createdBy === null ? 1 : a.createdBy < b.createdBy ? -1 : 1
    )
}

const everything = groupsOf(ITEMS)
const visible = groupsOf(ITEMS.filter((item) => !item.title.startsWith('secret')))
const creators = (groups: Array<{ createdBy: string | null }>) => groups.map((group) => group.createdBy)
const USER = { 'x-user': 'ann' }

forEachDatabase(
  'Aggregates: having, ordered and paged groups, distinct counts',
  (env) => {
    before(async () => {
      await clearTables(env.server.db)
      const ids = await seedTodoItems(env.server.db, ITEMS)
      await seedSubTasks(env.server.db, [
        { todoItemId: ids[0], title: 'x', completed: true },
        { todoItemId: ids[0], title: 'y' },
        { todoItemId: ids[0], title: 'y' },
        { todoItemId: ids[1], title: 'z' },
        { todoItemId: ids[1], title: 'x', completed: true },
        { todoItemId: ids[1], title: 'x' }
      ])
    })

    /** Runs a query, checking it ran in one statement, and answers its data. */
    const query = async (document: string, headers: Record<string, string> = {}) => {
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(env.server, document, undefined, headers)
      })
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.equal(statements, 1, 'one statement per request')
      return response.data
    }
    const byCreator = (args: string, headers?: Record<string, string>) =>
      query(`{ todoItemAggregate${args} { groupBy { createdBy } count { id } } }`, headers).then((data) =>
        data.todoItemAggregate.map((entry: any) => ({
          createdBy: entry.groupBy.createdBy,
          count: entry.count.id
        }))
      )

    it('keeps the groups whose aggregates pass having, composed with and/or, on records authorize lets through', async () => {
      const moreThanOne = '(having: {count: {id: {gt: 1}}})'
      const expect = (groups: Group[]) =>
        groups.filter((g) => g.count > 1).map((g) => ({ createdBy: g.createdBy, count: g.count }))
      assert.deepEqual(await byCreator(moreThanOne), expect(everything))
      assert.deepEqual(creators(await byCreator(moreThanOne)), [null, 'ann', 'bob', 'dan'])
      // authorize hides ann's secret and eve's only item: eve's group is gone, ann's counts three.
      assert.deepEqual(await byCreator(moreThanOne, USER), expect(visible))
      assert.deepEqual(await byCreator(moreThanOne, USER), [
        { createdBy: null, count: 2 },
        { createdBy: 'ann', count: 3 },
        { createdBy: 'bob', count: 2 },
        { createdBy: 'dan', count: 2 }
      ])

      const either = '(having: {or: [{count: {id: {gte: 3}}}, {avg: {priority: {gte: 4}}}]})'
      const passes = (g: Group) => g.count >= 3 || g.avg >= 4
      assert.deepEqual(creators(await byCreator(either)), creators(everything.filter(passes)))
      assert.deepEqual(creators(await byCreator(either)), ['ann', 'cid', 'eve'])
      assert.deepEqual(creators(await byCreator(either, USER)), creators(visible.filter(passes)))

      // max.priority is not selected: computed for having only, and not answered.
      const both = await query(
        '{ todoItemAggregate(having: {and: [{count: {id: {gte: 2}}}, {max: {priority: {lt: 3}}}]}) { groupBy { createdBy } count { id } } }',
        USER
      )
      assert.deepEqual(creators(both.todoItemAggregate.map((e: any) => e.groupBy)), ['bob', 'dan'])
      assert.deepEqual(Object.keys(both.todoItemAggregate[0]), ['groupBy', 'count'])
      assert.deepEqual(creators(visible.filter((g) => g.count >= 2 && g.max < 3)), ['bob', 'dan'])
    })

    it('applies having without groupBy to the one entry, which it may refuse', async () => {
      const kept = await query('{ todoItemAggregate(having: {count: {id: {gte: 12}}}) { count { id } } }')
      assert.deepEqual(kept.todoItemAggregate, [{ count: { id: 12 } }])
      const refused = await query(
        '{ todoItemAggregate(having: {count: {id: {gte: 12}}}) { count { id } } }',
        USER
      )
      assert.deepEqual(refused.todoItemAggregate, [])
    })

    it('orders groups by aggregates and keys, ties by the group keys, and pages them without repeats or gaps', async () => {
      const sorted = [...everything].sort((a, b) => b.count - a.count) // stable: ties stay in key order
      const top = '(sorting: [{field: id, aggregate: COUNT, direction: DESC}]'
      const all = await byCreator(`${top})`)
      assert.deepEqual(
        all,
        sorted.map((g) => ({ createdBy: g.createdBy, count: g.count }))
      )
      assert.deepEqual(creators(all), ['ann', null, 'bob', 'dan', 'cid', 'eve'])
      const pages: Array<string | null> = []
      for (let offset = 0; offset < 8; offset += 2) {
        pages.push(...creators(await byCreator(`${top}, paging: {limit: 2, offset: ${offset}})`)))
      }
      assert.deepEqual(pages, creators(all))

      const byKey = await byCreator('(sorting: [{field: createdBy, direction: DESC, nulls: NULLS_FIRST}])')
      assert.deepEqual(creators(byKey), [null, 'eve', 'dan', 'cid', 'bob', 'ann'])
      const byAverage = await query(
        '{ todoItemAggregate(sorting: [{field: priority, aggregate: AVG, direction: ASC}], paging: {limit: 3}) { groupBy { createdBy } avg { priority } } }',
        USER
      )
      const expected = [...visible].sort((a, b) => a.avg - b.avg).slice(0, 3)
      assert.deepEqual(
        byAverage.todoItemAggregate.map((e: any) => [e.groupBy.createdBy, e.avg.priority]),
        expected.map((g) => [g.createdBy, g.avg])
      )
    })

    it('answers a page of groups with its page info and the number of groups, in the same statement', async () => {
      const page = (args: string, headers?: Record<string, string>) =>
        query(
          `{ todoItemAggregateGroups(${args}) { nodes { groupBy { createdBy } count { id } } pageInfo { hasNextPage hasPreviousPage } totalCount } }`,
          headers
        ).then((data) => data.todoItemAggregateGroups)
      const sorting = 'sorting: [{field: id, aggregate: COUNT, direction: DESC}]'
      const first = await page(`${sorting}, having: {count: {id: {gt: 1}}}, paging: {limit: 3}`)
      assert.deepEqual(creators(first.nodes.map((n: any) => n.groupBy)), ['ann', null, 'bob'])
      assert.deepEqual(first.pageInfo, { hasNextPage: true, hasPreviousPage: false })
      assert.equal(first.totalCount, everything.filter((g) => g.count > 1).length)
      const last = await page(
        `${sorting}, having: {count: {id: {gt: 1}}}, paging: {limit: 3, offset: 3}`,
        USER
      )
      assert.deepEqual(creators(last.nodes.map((n: any) => n.groupBy)), ['dan'])
      assert.deepEqual(last.pageInfo, { hasNextPage: false, hasPreviousPage: true })
      assert.equal(last.totalCount, 4)
      const beyond = await page('paging: {limit: 3, offset: 50}')
      assert.deepEqual(beyond, {
        nodes: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: true },
        totalCount: 6
      })
      const none = await page('filter: {title: {eq: "nothing"}}, paging: {limit: 3}')
      assert.deepEqual(none, {
        nodes: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false },
        totalCount: 0
      })
    })

    it('counts distinct values per field, overall and per group', async () => {
      const overall = await query(
        '{ todoItemAggregate { countDistinct { priority completed title } count { priority } } }'
      )
      assert.deepEqual(overall.todoItemAggregate, [
        {
          countDistinct: { priority: new Set(ITEMS.map((i) => i.priority)).size, completed: 2, title: 12 },
          count: { priority: 12 }
        }
      ])
      const perCreator = await query(
        '{ todoItemAggregate(having: {countDistinct: {priority: {eq: 1}}}) { groupBy { createdBy } countDistinct { priority } } }',
        USER
      )
      assert.deepEqual(
        perCreator.todoItemAggregate.map((e: any) => [e.groupBy.createdBy, e.countDistinct.priority]),
        visible.filter((g) => g.distinct === 1).map((g) => [g.createdBy, 1])
      )
    })

    it("orders, filters and pages each parent's relation groups, all parents in one statement", async () => {
      // The page query and the batched relation aggregate: two statements.
      let response: any
      const statements = await env.server.countStatements(async () => {
        response = await graphql(
          env.server,
          `
            {
              todoItems(paging: { first: 2 }) {
                edges {
                  node {
                    title
                    subTasksAggregate(
                      sorting: [{ field: id, aggregate: COUNT, direction: DESC }]
                      paging: { limit: 1 }
                    ) {
                      groupBy {
                        title
                      }
                      count {
                        id
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
      assert.equal(statements, 2)
      assert.deepEqual(
        response.data.todoItems.edges.map((edge: any) => edge.node.subTasksAggregate),
        [[{ groupBy: { title: 'y' }, count: { id: 2 } }], [{ groupBy: { title: 'x' }, count: { id: 2 } }]]
      )
      const having = await graphql(
        env.server,
        `
          {
            todoItems(paging: { first: 2 }) {
              edges {
                node {
                  subTasksAggregate(
                    having: { count: { completed: { gte: 1 } }, min: { title: { lt: "zz" } } }
                    sorting: [{ field: title, direction: DESC }]
                  ) {
                    groupBy {
                      title
                    }
                    count {
                      completed
                    }
                  }
                }
              }
            }
          }
        `
      )
      assert.equal(having.errors, undefined, JSON.stringify(having.errors))
      assert.deepEqual(
        having.data.todoItems.edges.map((edge: any) => edge.node.subTasksAggregate),
        [
          [
            { groupBy: { title: 'y' }, count: { completed: 2 } },
            { groupBy: { title: 'x' }, count: { completed: 1 } }
          ],
          [
            { groupBy: { title: 'z' }, count: { completed: 1 } },
            { groupBy: { title: 'x' }, count: { completed: 2 } }
          ]
        ]
      )
    })

    it('refuses more than maxGroups groups before reading them all, unless the groups are paged', async () => {
      const unpaged = await graphql(env.server, '{ todoItemAggregate { groupBy { title } count { id } } }')
      assert.deepEqual(codes(unpaged), ['BAD_USER_INPUT'])
      assert.match(unpaged.errors![0].message, new RegExp(`more than ${MAX_GROUPS} groups.*page the groups`))
      const paged = await query(
        `{ todoItemAggregateGroups(paging: {limit: ${MAX_GROUPS}}) { nodes { groupBy { title } } pageInfo { hasNextPage } } }`
      )
      assert.equal(paged.todoItemAggregateGroups.nodes.length, MAX_GROUPS)
      assert.equal(paged.todoItemAggregateGroups.pageInfo.hasNextPage, true)
      const tooLarge = await graphql(
        env.server,
        `{ todoItemAggregate(paging: {limit: ${MAX_GROUPS + 1}}) { groupBy { title } } }`
      )
      assert.deepEqual(codes(tooLarge), ['BAD_USER_INPUT'])
      assert.equal(tooLarge.errors![0].extensions.errors![0].field, 'paging.limit')
    })

    it('refuses having, sorting and paging it cannot apply, naming each', async () => {
      const service = env.server.app.service('todo-items') as unknown as ResourceService
      await assert.rejects(
        service.aggregate({
          count: ['id'],
          having: { sum: { title: { gt: 1 } }, count: { nope: { gt: 1 } } },
          sorting: [
            { field: 'title', direction: 'ASC' },
            { field: 'priority', aggregate: 'avg', direction: 'UP' as 'ASC' }
          ],
          paging: { limit: 0, offset: -1 },
          totalCount: true,
          groupBy: [{ field: 'completed' }]
        }),
        (error: any) => {
          assert.equal(error.code, 400)
          assert.deepEqual(
            error.errors.map((entry: any) => entry.field),
            [
              'having.sum.title',
              'having.count.nope',
              'sorting.0.field',
              'sorting.1.direction',
              'paging.limit',
              'paging.offset'
            ]
          )
          return true
        }
      )
      await assert.rejects(service.aggregate({ count: ['id'], totalCount: true }), /totalCount/)
      await assert.rejects(
        service.aggregate({ count: ['id'], having: { count: { id: { like: '1%' } } } }),
        /like applies to text/
      )
    })
  },
  app
)
