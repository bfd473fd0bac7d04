import assert from 'node:assert/strict'
import { feathers } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import { forEachDatabase } from './support/server'
import { cursor, graphql } from './support/graphql'
import { relationOrderApp, seedRelationOrder, type ItemRow } from './support/relation-order-app'
import { compareValues, headersOf, ROWS, visibleTo, type Role } from './support/relation-order-data'

type Direction = 'ASC' | 'DESC'

/** The items' titles ordered by `keyOf` (NULLs as the plugin places them by default or as told), then by id. */
function orderedTitles(
  items: ItemRow[],
  keyOf: (item: ItemRow) => unknown,
  direction: Direction,
  nullsFirst?: boolean
) {
  return [...items]
    .sort((a, b) => compareValues(keyOf(a), keyOf(b), direction, nullsFirst) || a.id - b.id)
    .map((item) => item.title)
}

/** Per item: how many sub-tasks the caller may read and the sum of their points (null without any points). */
function subTaskAggregates(role: Role) {
  const visible = visibleTo(role)
  const count = (item: ItemRow) => visible.subTasks.filter((task) => task.todoItemId === item.id).length
  const sum = (item: ItemRow) => {
    const points = visible.subTasks
      .filter((task) => task.todoItemId === item.id && task.points !== null)
      .map((task) => task.points!)
    return points.length ? points.reduce((total, value) => total + value, 0) : null
  }
  return { count, sum }
}

forEachDatabase(
  'Sorting by related records: to-one fields and relation aggregates',
  (env) => {
    before(async function () {
      this.timeout(60000)
      await seedRelationOrder(env.server.db, ROWS)
    })

    const titles = async (sorting: string, role: Role = 'user', paging = '{ first: 50 }') => {
      const response = await graphql(
        env.server,
        `{ todoItems(sorting: ${sorting}, paging: ${paging}) { totalCount edges { node { title } } } }`,
        undefined,
        headersOf(role)
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      return response.data.todoItems.edges.map((edge: any) => edge.node.title) as string[]
    }

    for (const role of ['user', 'admin'] as Role[]) {
      it(`by the owner's name, both directions and NULL placements, as ${role}`, async () => {
        const visible = visibleTo(role)
        const ownerName = (item: ItemRow) => visible.personOf(item.ownerId)?.name ?? null
        for (const [direction, nulls, nullsFirst] of [
          ['ASC', '', undefined],
          ['DESC', '', undefined],
          ['ASC', 'nulls: NULLS_LAST', false],
          ['DESC', 'nulls: NULLS_FIRST', true]
        ] as Array<[Direction, string, boolean | undefined]>) {
          assert.deepEqual(
            await titles(`[{ path: "owner.name", direction: ${direction} ${nulls} }]`, role),
            orderedTitles(visible.items, ownerName, direction, nullsFirst),
            `${direction} ${nulls}`
          )
        }
      })

      it(`by how many sub-tasks each has and by the sum of their points, as ${role}`, async () => {
        const visible = visibleTo(role)
        const { count, sum } = subTaskAggregates(role)
        assert.deepEqual(
          await titles('[{ path: "subTasks", aggregate: COUNT, direction: DESC }]', role),
          orderedTitles(visible.items, count, 'DESC')
        )
        assert.deepEqual(
          await titles(
            '[{ path: "subTasks.points", aggregate: SUM, direction: DESC, nulls: NULLS_LAST }]',
            role
          ),
          orderedTitles(visible.items, sum, 'DESC', false)
        )
        // Many-to-many: the tags the caller may read (live, not secret) through their links.
        assert.deepEqual(
          await titles(
            '[{ path: "tags", aggregate: COUNT, direction: DESC }, { field: title, direction: ASC }]',
            role
          ),
          [...visible.items]
            .sort(
              (a, b) => visible.tagCount(b.id) - visible.tagCount(a.id) || compareValues(a.title, b.title)
            )
            .map((item) => item.title)
        )
      })
    }

    it('an owner the caller may not read sorts as no owner: its name leaks no position', async () => {
      // For a user, hotel and charlie (owned by the secret Aaron and Sam) sit among the items without an owner.
      const user = await titles('[{ path: "owner.name", direction: ASC }]')
      const admin = await titles('[{ path: "owner.name", direction: ASC }]', 'admin')
      // Admins read both secret owners: their items come last, hotel (secret-Aaron) before charlie (secret-Sam).
      assert.deepEqual(admin.slice(0, 2), ['delta', 'echo'])
      assert.deepEqual(admin.slice(-2), ['hotel', 'charlie'])
      assert.deepEqual(user.slice(0, 4), ['charlie', 'delta', 'echo', 'hotel'])
      // A hidden sub-task's 90 points and a deleted one's 50 move nothing either.
      const sums = await titles('[{ path: "subTasks.points", aggregate: SUM, direction: DESC }]')
      // foxtrot's only sub-task is hidden: it ends with india, which has none, as an item without points.
      assert.deepEqual(sums.slice(-2), ['foxtrot', 'india'])
    })

    it('offset pages across the order neither repeat nor skip, ties broken by id', async () => {
      const visible = visibleTo('user')
      const expected = orderedTitles(visible.items, (item) => item.completed, 'ASC')
      const sorting = '[{ path: "owner.mentor.name", direction: ASC }, { field: completed, direction: ASC }]'
      const mentor = (item: ItemRow) =>
        visible.personOf(visible.personOf(item.ownerId)?.mentorId)?.name ?? null
      const all = [...visible.items]
        .sort(
          (a, b) =>
            compareValues(mentor(a), mentor(b)) || compareValues(a.completed, b.completed) || a.id - b.id
        )
        .map((item) => item.title)
      assert.notDeepEqual(all, expected)
      const pages: string[] = []
      for (let start = 0; start < all.length; start += 3) {
        const after = start === 0 ? '' : `, after: "${cursor(start - 1)}"`
        pages.push(...(await titles(sorting, 'user', `{ first: 3${after} }`)))
      }
      assert.deepEqual(pages, all)
    })

    it('the statements of a sorted page: as many as by an own field', async () => {
      const query = (sorting: string) => () =>
        graphql(
          env.server,
          `{ todoItems(sorting: ${sorting}, paging: { first: 3 }) { totalCount edges { node { title } } } }`
        )
      const own = await env.server.countStatements(query('[{ field: title, direction: ASC }]'))
      for (const sorting of [
        '[{ path: "owner.name", direction: ASC }]',
        '[{ path: "owner.mentor.name", direction: ASC }, { path: "subTasks", aggregate: COUNT, direction: DESC }]'
      ]) {
        assert.equal(await env.server.countStatements(query(sorting)), own, sorting)
      }
    })

    it("sub-tasks by their todo item's owner, and relation connections sorted by related records", async () => {
      const visible = visibleTo('user')
      const response = await graphql(
        env.server,
        `
          {
            subTasks(sorting: [{ path: "todoItem.owner.name", direction: DESC }], paging: { first: 50 }) {
              edges {
                node {
                  title
                }
              }
            }
            todoItems(sorting: [{ field: id, direction: ASC }], paging: { first: 50 }) {
              edges {
                node {
                  title
                  subTasks(
                    sorting: [
                      { path: "todoItem.owner.name", direction: ASC }
                      { field: points, direction: DESC }
                    ]
                  ) {
                    edges {
                      node {
                        title
                      }
                    }
                  }
                }
              }
            }
          }
        `
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      const ownerOf = (todoItemId: number) =>
        visible.personOf(visible.itemOf(todoItemId)?.ownerId)?.name ?? null
      const expected = [...visible.subTasks]
        .sort((a, b) => compareValues(ownerOf(a.todoItemId), ownerOf(b.todoItemId), 'DESC') || a.id - b.id)
        .map((task) => task.title)
      assert.deepEqual(
        response.data.subTasks.edges.map((edge: any) => edge.node.title),
        expected
      )
      for (const edge of response.data.todoItems.edges) {
        const item = visible.items.find((candidate) => candidate.title === edge.node.title)!
        const tasks = visible.subTasks
          .filter((task) => task.todoItemId === item.id)
          .sort((a, b) => compareValues(a.points, b.points, 'DESC') || a.id - b.id)
        assert.deepEqual(
          edge.node.subTasks.edges.map((inner: any) => inner.node.title),
          tasks.map((task) => task.title),
          item.title
        )
      }
    })

    it("REST in Feathers' syntax and a Feathers client: $sort by a related field and by count(relation)", async () => {
      const visible = visibleTo('user')
      const ownerName = (item: ItemRow) => visible.personOf(item.ownerId)?.name ?? null
      const byOwner = orderedTitles(visible.items, ownerName, 'DESC')
      const response = await env.server.http(
        'GET',
        `/todo-items?${encodeURI('$sort[owner.name]=-1&$limit=4&$skip=2')}`,
        undefined,
        { 'x-query-syntax': 'feathers' }
      )
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(
        response.body.data.map((item: any) => item.title),
        byOwner.slice(2, 6)
      )
      const client = feathers()
      client.configure(
        restClient(env.server.baseUrl).fetch(fetch, { headers: { 'x-query-syntax': 'feathers' } })
      )
      const { count, sum } = subTaskAggregates('user')
      const page = await client.service('todo-items').find({
        query: { $sort: { 'count(subTasks)': -1, 'sum(subTasks.points)': 1 }, $limit: 20 }
      })
      const expected = [...visible.items]
        .sort((a, b) => count(b) - count(a) || compareValues(sum(a), sum(b)) || a.id - b.id)
        .map((item) => item.title)
      assert.deepEqual(
        (page as any).data.map((item: any) => item.title),
        expected
      )
    })

    it("the service API in the query model: by the largest of a relation's values, as an internal call", async () => {
      const visible = visibleTo('user')
      const max = (item: ItemRow) => {
        const points = visible.subTasks.filter((task) => task.todoItemId === item.id && task.points !== null)
        return points.length ? Math.max(...points.map((task) => task.points!)) : null
      }
      const page = await (env.server.app.service('todo-items') as any).find({
        queryModel: true,
        query: {
          sorting: [{ field: 'subTasks.points', aggregate: 'max', direction: 'DESC' }],
          paging: { limit: 50 }
        }
      })
      assert.deepEqual(
        page.data.map((item: any) => item.title),
        orderedTitles(visible.items, max, 'DESC')
      )
    })

    const refusal = async (sorting: string, connection = 'todoItems(sorting: $sorting)') => {
      const response = await graphql(
        env.server,
        `query ($sorting: [TodoItemSort!]) { ${connection} { edges { node { id } } } }`,
        { sorting: JSON.parse(sorting) }
      )
      assert.equal(response.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', JSON.stringify(response))
      return response.errors![0].extensions.errors
    }

    it('400s naming the entry: unknown relation, to-many without aggregate, hidden field, too deep, keyset', async () => {
      const cases: Array<[unknown[], string, string]> = [
        [[{ path: 'ownr.name', direction: 'ASC' }], 'sorting.0.field', 'TodoItem has no relation "ownr"'],
        [
          [{ path: 'subTasks.title', direction: 'ASC' }],
          'sorting.0.field',
          'subTasks is a to-many relation: only to-one relations lead to one value per record'
        ],
        [
          [{ path: 'owner.badge', direction: 'ASC' }],
          'sorting.0.field',
          'Person cannot be sorted by "badge"'
        ],
        [
          [{ path: 'owner.nickname', direction: 'ASC' }],
          'sorting.0.field',
          'Person cannot be sorted by "nickname"'
        ],
        [
          [
            { field: 'title', direction: 'ASC' },
            { path: 'owner.mentor.mentor.mentor.name', direction: 'ASC' }
          ],
          'sorting.1.field',
          'goes through more than 3 relations (limits.maxRelationDepth)'
        ],
        [
          [{ field: 'title', path: 'owner.name', direction: 'ASC' }],
          'sorting.0.field',
          'give either field or path'
        ],
        [
          [{ path: 'owner.name', aggregate: 'SUM', direction: 'ASC' }],
          'sorting.0.field',
          'owner is a to-one relation: sort by its fields (owner.field)'
        ],
        [
          [{ path: 'subTasks.title', aggregate: 'SUM', direction: 'ASC' }],
          'sorting.0.field',
          'sum applies to numeric fields only'
        ],
        [
          [{ path: 'subTasksByKey', aggregate: 'COUNT', direction: 'ASC' }],
          'sorting.0.field',
          'TodoItem.subTasksByKey is not a filterable relation'
        ]
      ]
      const eleven = Array.from({ length: 11 }, () => ({
        path: 'subTasks',
        aggregate: 'COUNT',
        direction: 'ASC'
      }))
      cases.push([
        eleven,
        'sorting.10.field',
        'a sort may join at most 10 relations (limits.maxRelationFilters)'
      ])
      for (const [sorting, field, message] of cases) {
        assert.deepEqual(
          await refusal(JSON.stringify(sorting)),
          [{ field, message }],
          JSON.stringify(sorting)
        )
      }
      const keyset = await graphql(
        env.server,
        '{ todoItems(paging: { first: 50 }) { edges { node { subTasksByKey(sorting: [{ path: "todoItem.title", direction: ASC }]) { edges { node { id } } } } } } }'
      )
      assert.equal(keyset.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', JSON.stringify(keyset))
      assert.deepEqual(keyset.errors![0].extensions.errors, [
        {
          field: 'sorting.0.field',
          message: 'sorts by related records, which keyset cursors cannot page by: page by offset'
        }
      ])
      const feathersSyntax = await env.server.http(
        'GET',
        `/todo-items?${encodeURI('$sort[owner.secret]=1')}`,
        undefined,
        {
          'x-query-syntax': 'feathers'
        }
      )
      assert.equal(feathersSyntax.status, 400, feathersSyntax.text)
    })
  },
  relationOrderApp
)
