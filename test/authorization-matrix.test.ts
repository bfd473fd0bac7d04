import assert from 'node:assert/strict'
import type { Knex } from 'knex'
import { forEachDatabase, type TestServer } from './support/server'
import { parseCsv } from './support/csv'
import { tableRows } from './support/tables'
import { codes, graphql } from './support/graphql'
import { accessToken, bearer, createAuthApp, draftRules, users } from './support/auth-app'

/**
 * Every way to reach a record, for each of two users whose `authorize` rule is "your own records only"
 * (TodoItem and SubTask owned through `createdBy`, signed in with a real JWT). Each cell starts from the same
 * data and must reach exactly the user's own records that the path can reach: no path returns, counts,
 * exports or changes a record of the other user.
 */

type User = 'ann' | 'bob'
const USERS: User[] = ['ann', 'bob']

const TODO_ITEMS = [
  { id: 1, owner: 'ann', completed: false },
  { id: 2, owner: 'bob', completed: false },
  { id: 3, owner: 'ann', completed: true },
  { id: 4, owner: 'bob', completed: false }
]
const SUB_TASKS = [
  { id: 1, owner: 'ann', todoItemId: 1 },
  { id: 2, owner: 'bob', todoItemId: 1 }, // bob's sub-task under ann's item
  { id: 3, owner: 'bob', todoItemId: 2 },
  { id: 4, owner: 'ann', todoItemId: 2 }, // ann's sub-task under bob's item
  { id: 5, owner: 'ann', todoItemId: 3 },
  { id: 6, owner: 'bob', todoItemId: 4 }
]

const todoKey = (id: unknown) => `TodoItem:${id}`
const subTaskKey = (id: unknown) => `SubTask:${id}`
const ownerOf = (key: string) => {
  const [kind, id] = key.split(':')
  const rows: Array<{ id: number; owner: string }> = kind === 'TodoItem' ? TODO_ITEMS : SUB_TASKS
  return rows.find((row) => String(row.id) === id)?.owner
}
const itemOwner = (id: number) => TODO_ITEMS.find((item) => item.id === id)!.owner

const ownItems = (user: User) => TODO_ITEMS.filter((item) => item.owner === user)
const ownSubTasks = (user: User) => SUB_TASKS.filter((task) => task.owner === user)
/** Relations are reached from the parent side: only the user's sub-tasks of the user's items. */
const ownSubTasksOfOwnItems = (user: User) =>
  ownSubTasks(user).filter((task) => itemOwner(task.todoItemId) === user)

async function seed(db: Knex) {
  await db('sub_tasks').delete()
  await db('todo_items').delete()
  const created = new Date('2026-03-01T00:00:00.000Z')
  const audit = (owner: string) => ({ created, updated: created, createdBy: owner, updatedBy: owner })
  await db('todo_items').insert(
    TODO_ITEMS.map(({ id, owner, completed }) => ({
      id,
      title: `item ${id}`,
      completed,
      priority: 1,
      ...audit(owner)
    }))
  )
  await db('sub_tasks').insert(
    SUB_TASKS.map(({ id, owner, todoItemId }) => ({ id, title: `task ${id}`, todoItemId, ...audit(owner) }))
  )
}

interface Caller {
  server: TestServer
  user: User
  headers: Record<string, string>
}

const rest = (caller: Caller, method: string, path: string, body?: unknown) =>
  caller.server.http(method, path, body, caller.headers)

const query = (caller: Caller, source: string) => graphql(caller.server, source, undefined, caller.headers)

async function restList(caller: Caller, path: string, key: (id: unknown) => string) {
  const response = await rest(caller, 'GET', `${path}?limit=50`)
  assert.equal(response.status, 200, response.text)
  assert.equal(response.body.totalCount, response.body.nodes.length, 'totalCount counts what is visible')
  return response.body.nodes.map((node: { id: number }) => key(node.id))
}

/** GET of every id: what answers 200; everything else must be a plain 404. */
async function restGetEach(caller: Caller, path: string, ids: number[], key: (id: unknown) => string) {
  const found: string[] = []
  for (const id of ids) {
    const response = await rest(caller, 'GET', `${path}/${id}`)
    if (response.status === 200) found.push(key(response.body.id))
    else assert.equal(response.status, 404, response.text)
  }
  return found
}

/** The first column of a CSV export, which is the id. */
function idColumn(csv: string) {
  const { header, records } = parseCsv(csv)
  assert.equal(header[0], 'id')
  return records.map((record) => Number(record.id))
}

async function csvIds(caller: Caller, path: string, key: (id: unknown) => string) {
  const response = await rest(caller, 'GET', path)
  assert.equal(response.status, 200, response.text)
  return idColumn(response.text).map(key)
}

async function ndjsonIds(caller: Caller, path: string, key: (id: unknown) => string) {
  // Read as text: the suite's JSON client would parse it as one JSON text.
  const response = await fetch(caller.server.baseUrl + path, {
    headers: { ...caller.headers, accept: 'application/x-ndjson' }
  })
  const text = await response.text()
  assert.equal(response.status, 200, text)
  assert.equal(response.headers.get('content-type'), 'application/x-ndjson')
  const lines = text.split('\n').filter(Boolean)
  return lines.map((line) => key(JSON.parse(line).id))
}

async function snapshot(db: Knex, table: string) {
  const [rows] = await tableRows(db, [table])
  return new Map(rows.map((row) => [Number(row.id), JSON.stringify(row)]))
}

/**
 * Sends `method` to every id; what answers 200 must be exactly what changed in the database, and every
 * refusal a 404, as for a missing record.
 */
async function writeEach(
  caller: Caller,
  method: string,
  path: string,
  table: string,
  ids: number[],
  key: (id: unknown) => string
) {
  const before = await snapshot(caller.server.db, table)
  const answered: string[] = []
  for (const id of ids) {
    const body = method === 'DELETE' ? undefined : { title: `${method} by ${caller.user}` }
    const response = await rest(caller, method, `${path}/${id}`, body)
    if (response.status === 200) answered.push(key(id))
    // Another user's record is missing to the caller; an own one with another user's children under it,
    // which the remove would take along, is forbidden.
    else if (response.status !== 403 || !/not yours to remove/.test(response.body.message))
      assert.equal(response.status, 404, response.text)
  }
  const after = await snapshot(caller.server.db, table)
  const changed = ids.filter((id) => before.get(id) !== after.get(id)).map(key)
  assert.deepEqual(changed, answered, 'exactly the records that answered 200 changed')
  return changed
}

/**
 * Runs the GraphQL mutation `source(id)` for every id; every refusal must be a NOT_FOUND, as for a missing
 * record, and leave its record as it was; what answers must have changed (unless the mutation may find
 * nothing to change, as pointing a sub-task at the item it is under).
 */
async function mutateEach(
  caller: Caller,
  table: string,
  ids: number[],
  key: (id: unknown) => string,
  source: (id: number) => string,
  mayBeUnchanged = false
) {
  const before = await snapshot(caller.server.db, table)
  const answered: string[] = []
  for (const id of ids) {
    const response = await query(caller, `mutation { ${source(id)} }`)
    if (!response.errors) answered.push(key(id))
    else if (!/not yours to remove/.test(response.errors[0]?.message ?? ''))
      assert.deepEqual(codes(response), ['NOT_FOUND'], JSON.stringify(response.errors))
  }
  const after = await snapshot(caller.server.db, table)
  const changed = ids.filter((id) => before.get(id) !== after.get(id)).map(key)
  if (mayBeUnchanged)
    assert.deepEqual(
      changed.filter((record) => !answered.includes(record)),
      [],
      'refused ones unchanged'
    )
  else assert.deepEqual(changed, answered, 'exactly the records that answered changed')
  return answered
}

/** The first of the user's own items, to attach sub-tasks to. */
const ownItemId = (user: User) => ownItems(user)[0].id

function edgesOf(connection: { edges: Array<{ node: { id: string } }> }, key: (id: unknown) => string) {
  return connection.edges.map((edge) => key(edge.node.id))
}

function noErrors(response: Awaited<ReturnType<typeof query>>) {
  assert.equal(response.errors, undefined, JSON.stringify(response.errors))
  return response.data
}

const ALL_ITEM_IDS = TODO_ITEMS.map((item) => item.id)
const ALL_TASK_IDS = SUB_TASKS.map((task) => task.id)

interface MatrixPath {
  path: string
  /** The records `user` must reach this way. */
  reaches(user: User): string[]
  run(caller: Caller): Promise<string[]>
}

const items = (user: User) => ownItems(user).map((item) => todoKey(item.id))
/** What a user may remove for good: own items with no other user's sub-task under them (see cascades). */
const removableItems = (user: User) =>
  ownItems(user)
    .filter((item) => SUB_TASKS.every((task) => task.todoItemId !== item.id || task.owner === user))
    .map((item) => todoKey(item.id))
const tasks = (user: User) => ownSubTasks(user).map((task) => subTaskKey(task.id))
const tasksOfOwnItems = (user: User) => ownSubTasksOfOwnItems(user).map((task) => subTaskKey(task.id))

const PATHS: MatrixPath[] = [
  { path: 'REST list', reaches: items, run: (caller) => restList(caller, '/todo-items', todoKey) },
  {
    path: 'REST list, SubTask (disableFilter)',
    reaches: tasks,
    run: (caller) => restList(caller, '/sub-tasks', subTaskKey)
  },
  {
    path: 'REST list with a filter parameter',
    reaches: (user) =>
      ownItems(user)
        .filter((item) => !item.completed)
        .map((item) => todoKey(item.id)),
    run: async (caller) => {
      const response = await rest(caller, 'GET', '/todo-items?completed=false')
      return response.body.nodes.map((node: { id: number }) => todoKey(node.id))
    }
  },
  {
    path: 'REST get',
    reaches: items,
    run: (caller) => restGetEach(caller, '/todo-items', ALL_ITEM_IDS, todoKey)
  },
  {
    path: 'REST get, SubTask',
    reaches: tasks,
    run: (caller) => restGetEach(caller, '/sub-tasks', ALL_TASK_IDS, subTaskKey)
  },
  { path: 'CSV export', reaches: items, run: (caller) => csvIds(caller, '/todo-items/export', todoKey) },
  {
    path: 'CSV export with a filter parameter',
    reaches: (user) =>
      ownItems(user)
        .filter((item) => !item.completed)
        .map((item) => todoKey(item.id)),
    run: (caller) => csvIds(caller, '/todo-items/export?completed=false', todoKey)
  },
  {
    path: 'CSV export, SubTask (disableFilter)',
    reaches: tasks,
    run: (caller) => csvIds(caller, '/sub-tasks/export', subTaskKey)
  },
  {
    path: 'NDJSON export',
    reaches: items,
    run: (caller) => ndjsonIds(caller, '/todo-items/export', todoKey)
  },
  {
    path: 'NDJSON export, SubTask (disableFilter)',
    reaches: tasks,
    run: (caller) => ndjsonIds(caller, '/sub-tasks/export', subTaskKey)
  },
  {
    path: 'GraphQL collection',
    reaches: items,
    run: async (caller) => {
      const { todoItems } = noErrors(
        await query(caller, '{ todoItems(paging: {first: 50}) { totalCount edges { node { id } } } }')
      )
      assert.equal(todoItems.totalCount, todoItems.edges.length, 'totalCount counts what is visible')
      return edgesOf(todoItems, todoKey)
    }
  },
  {
    path: 'GraphQL collection, SubTask',
    reaches: tasks,
    run: async (caller) => {
      const { subTasks } = noErrors(
        await query(caller, '{ subTasks(paging: {first: 50}) { totalCount edges { node { id } } } }')
      )
      assert.equal(subTasks.totalCount, subTasks.edges.length)
      return edgesOf(subTasks, subTaskKey)
    }
  },
  {
    path: 'GraphQL single',
    reaches: items,
    run: async (caller) => {
      const aliases = ALL_ITEM_IDS.map((id) => `i${id}: todoItem(id: "${id}") { id }`).join(' ')
      const response = await query(caller, `{ ${aliases} }`)
      const found = ALL_ITEM_IDS.filter((id) => response.data[`i${id}`] !== null).map(todoKey)
      assert.deepEqual(
        codes(response),
        Array(ALL_ITEM_IDS.length - found.length).fill('NOT_FOUND'),
        'a hidden record is a missing one'
      )
      return found
    }
  },
  {
    path: 'GraphQL aggregate',
    reaches: items,
    run: async (caller) => {
      const source =
        '{ todoItemAggregate { groupBy { id } count { id } } all: todoItemAggregate { count { id } } }'
      const { todoItemAggregate, all } = noErrors(await query(caller, source))
      const found = todoItemAggregate.map((group: { groupBy: { id: string } }) => todoKey(group.groupBy.id))
      assert.equal(all[0].count.id, found.length, 'the ungrouped count counts what is visible')
      return found
    }
  },
  {
    path: 'GraphQL aggregate, SubTask',
    reaches: tasks,
    run: async (caller) => {
      const { subTaskAggregate } = noErrors(await query(caller, '{ subTaskAggregate { groupBy { id } } }'))
      return subTaskAggregate.map((group: { groupBy: { id: string } }) => subTaskKey(group.groupBy.id))
    }
  },
  {
    path: 'GraphQL relation connection (TodoItem.subTasks)',
    reaches: tasksOfOwnItems,
    run: async (caller) => {
      const source =
        '{ todoItems { edges { node { id ' +
        'subTasks(paging: {first: 50}) { totalCount edges { node { id todoItemId } } } } } } }'
      const { todoItems } = noErrors(await query(caller, source))
      return todoItems.edges.flatMap(({ node }: any) => {
        assert.equal(
          node.subTasks.totalCount,
          node.subTasks.edges.length,
          'relation totalCount counts what is visible'
        )
        for (const edge of node.subTasks.edges) assert.equal(edge.node.todoItemId, node.id)
        return edgesOf(node.subTasks, subTaskKey)
      })
    }
  },
  {
    path: 'GraphQL relation connection from a single record',
    reaches: tasksOfOwnItems,
    run: async (caller) => {
      const aliases = ALL_ITEM_IDS.map(
        (id) => `i${id}: todoItem(id: "${id}") { subTasks { edges { node { id } } } }`
      )
      const response = await query(caller, `{ ${aliases.join(' ')} }`)
      return ALL_ITEM_IDS.flatMap((id) => {
        const item = response.data[`i${id}`]
        return item ? edgesOf(item.subTasks, subTaskKey) : []
      })
    }
  },
  {
    path: 'GraphQL relation aggregate (TodoItem.subTasksAggregate)',
    reaches: tasksOfOwnItems,
    run: async (caller) => {
      const source =
        '{ todoItems { edges { node { ' +
        'subTasksAggregate { groupBy { id } } counted: subTasksAggregate { count { id } } } } } }'
      const { todoItems } = noErrors(await query(caller, source))
      return todoItems.edges.flatMap(({ node }: any) => {
        const found = node.subTasksAggregate.map((group: { groupBy: { id: string } }) =>
          subTaskKey(group.groupBy.id)
        )
        assert.equal(node.counted[0].count.id, found.length, 'the relation count counts what is visible')
        return found
      })
    }
  },
  {
    path: 'GraphQL one-relation (SubTask.todoItem)',
    // The user's items that have a sub-task of the user's; an item of the other user answers null.
    reaches: (user) =>
      [...new Set(ownSubTasks(user).map((task) => task.todoItemId))]
        .filter((id) => itemOwner(id) === user)
        .map(todoKey),
    run: async (caller) => {
      const { subTasks } = noErrors(
        await query(caller, '{ subTasks { edges { node { todoItemId todoItem { id } } } } }')
      )
      const found = new Set<string>()
      for (const { node } of subTasks.edges) {
        const visible = ownerOf(todoKey(node.todoItemId)) === caller.user
        assert.equal(node.todoItem === null, !visible, `SubTask's todoItem ${node.todoItemId}`)
        if (node.todoItem) found.add(todoKey(node.todoItem.id))
      }
      return [...found]
    }
  },
  {
    path: 'REST PATCH',
    reaches: items,
    run: (caller) => writeEach(caller, 'PATCH', '/todo-items', 'todo_items', ALL_ITEM_IDS, todoKey)
  },
  {
    path: 'REST PUT',
    reaches: items,
    run: (caller) => writeEach(caller, 'PUT', '/todo-items', 'todo_items', ALL_ITEM_IDS, todoKey)
  },
  {
    path: 'REST PUT, SubTask',
    reaches: tasks,
    run: (caller) => writeEach(caller, 'PUT', '/sub-tasks', 'sub_tasks', ALL_TASK_IDS, subTaskKey)
  },
  {
    path: 'REST DELETE, SubTask',
    reaches: tasks,
    run: (caller) => writeEach(caller, 'DELETE', '/sub-tasks', 'sub_tasks', ALL_TASK_IDS, subTaskKey)
  },
  {
    path: 'GraphQL updateOneTodoItem',
    reaches: items,
    run: (caller) =>
      mutateEach(
        caller,
        'todo_items',
        ALL_ITEM_IDS,
        todoKey,
        (id) => `updateOneTodoItem(input: { id: ${id}, update: { title: "by ${caller.user}" } }) { id }`
      )
  },
  {
    path: 'GraphQL updateOneSubTask',
    reaches: tasks,
    run: (caller) =>
      mutateEach(
        caller,
        'sub_tasks',
        ALL_TASK_IDS,
        subTaskKey,
        (id) => `updateOneSubTask(input: { id: ${id}, update: { title: "by ${caller.user}" } }) { id }`
      )
  },
  {
    path: 'GraphQL deleteOneSubTask',
    reaches: tasks,
    run: (caller) =>
      mutateEach(
        caller,
        'sub_tasks',
        ALL_TASK_IDS,
        subTaskKey,
        (id) => `deleteOneSubTask(input: { id: ${id} }) { title }`
      )
  },
  {
    path: 'GraphQL deleteOneTodoItem',
    reaches: removableItems,
    run: (caller) =>
      mutateEach(
        caller,
        'todo_items',
        ALL_ITEM_IDS,
        todoKey,
        (id) => `deleteOneTodoItem(input: { id: ${id} }) { title }`
      )
  },
  {
    path: 'GraphQL setTodoItemOnSubTask (to an own item)',
    reaches: tasks,
    run: (caller) =>
      mutateEach(
        caller,
        'sub_tasks',
        ALL_TASK_IDS,
        subTaskKey,
        (id) => `setTodoItemOnSubTask(input: { id: ${id}, relationId: ${ownItemId(caller.user)} }) { id }`,
        true
      )
  },
  {
    path: 'GraphQL addSubTasksToTodoItem (each sub-task to an own item)',
    reaches: tasks,
    run: (caller) =>
      mutateEach(
        caller,
        'sub_tasks',
        ALL_TASK_IDS,
        subTaskKey,
        (id) =>
          `addSubTasksToTodoItem(input: { id: ${ownItemId(caller.user)}, relationIds: [${id}] }) { id }`,
        true
      )
  },
  {
    // ON DELETE CASCADE would take another user's sub-tasks under an own item: such an item is refused (403).
    path: 'REST DELETE',
    reaches: removableItems,
    run: (caller) => writeEach(caller, 'DELETE', '/todo-items', 'todo_items', ALL_ITEM_IDS, todoKey)
  }
]

forEachDatabase(
  'Authorization matrix: every path × every user reaches only the user’s own records',
  (env) => {
    const callers = {} as Record<User, Caller>
    before(async () => {
      for (const user of USERS) {
        const token = await accessToken(env.server, user)
        callers[user] = { server: env.server, user, headers: bearer(token) }
      }
    })
    beforeEach(() => seed(env.server.db))

    for (const { path, reaches, run } of PATHS) {
      for (const user of USERS) {
        it(`${path} as ${user}`, async () => {
          const expected = reaches(user).sort()
          assert.ok(expected.length > 0, 'each cell must be able to fail')
          const reached = (await run(callers[user])).sort()
          assert.deepEqual(
            reached.filter((key) => ownerOf(key) !== user),
            [],
            'records of the other user'
          )
          assert.deepEqual(reached, expected)
        })
      }
    }

    describe('authorize rules that leave a value missing (no user, no team) let nothing through', () => {
      const DRAFTS = [
        { id: 1, author: 'ann', team: 'red' },
        { id: 2, author: 'bob', team: 'blue' },
        { id: 3, author: 'bob', team: 'red' }
      ]
      async function seedDrafts() {
        await env.server.db('drafts').delete()
        await env.server.db('drafts').insert(DRAFTS.map((draft) => ({ ...draft, text: `draft ${draft.id}` })))
      }

      /** What each rule means: the author's drafts or the user's teams' drafts; nothing without a user. */
      function visible(rule: string, user?: User) {
        if (!user) return []
        const byTeam = rule === 'or over no team'
        const teams = users[user].teams ?? []
        return DRAFTS.filter((draft) => (byTeam ? teams.includes(draft.team) : draft.author === user)).map(
          (draft) => draft.id
        )
      }

      const DRAFT_PATHS: Array<[string, (headers: Record<string, string>) => Promise<number[]>]> = [
        [
          'REST list',
          async (headers) =>
            (await env.server.http('GET', '/drafts', undefined, headers)).body.nodes.map((n: any) => n.id)
        ],
        [
          'CSV export',
          async (headers) =>
            idColumn((await env.server.http('GET', '/drafts/export', undefined, headers)).text)
        ],
        [
          'GraphQL collection and aggregate',
          async (headers) => {
            const source = '{ drafts { edges { node { id } } } draftAggregate { groupBy { id } } }'
            const { data, errors } = await graphql(env.server, source, undefined, headers)
            assert.equal(errors, undefined, JSON.stringify(errors))
            const fromAggregate = data.draftAggregate.map((group: any) => Number(group.groupBy.id))
            const ids = data.drafts.edges.map((edge: any) => Number(edge.node.id))
            assert.deepEqual(fromAggregate, ids)
            return ids
          }
        ],
        [
          'REST PATCH of every draft',
          async (headers) => {
            const changed: number[] = []
            for (const { id } of DRAFTS) {
              const response = await env.server.http('PATCH', `/drafts/${id}`, { text: 'changed' }, headers)
              if (response.status === 200) changed.push(id)
            }
            const rows = await env.server.db('drafts').where('text', 'changed').orderBy('id')
            assert.deepEqual(
              rows.map((row) => Number(row.id)),
              changed
            )
            return changed
          }
        ]
      ]

      for (const rule of Object.keys(draftRules)) {
        for (const user of USERS) {
          it(`${rule}, ${user}: REST list, CSV export, GraphQL, REST PATCH`, async () => {
            const headers = { 'x-rule': rule, ...callers[user].headers }
            for (const [name, read] of DRAFT_PATHS) {
              await seedDrafts()
              assert.deepEqual(await read(headers), visible(rule, user), name)
            }
          })
        }
        // A rule that misses its value because nobody signed in needed a user: a 401, not an empty answer.
        it(`${rule}, anonymous: 401 / UNAUTHENTICATED on every path, nothing changed`, async () => {
          await seedDrafts()
          const headers = { 'x-rule': rule }
          for (const [method, path, body] of [
            ['GET', '/drafts'],
            ['GET', '/drafts/export'],
            ['GET', '/drafts/1'],
            ['PATCH', '/drafts/1', { text: 'changed' }]
          ] as const) {
            const response = await env.server.http(method, path, body, headers)
            assert.equal(response.status, 401, `${method} ${path}: ${JSON.stringify(response.body)}`)
            assert.equal(response.body.name, 'NotAuthenticated')
          }
          const { errors } = await graphql(
            env.server,
            '{ drafts { edges { node { id } } } }',
            undefined,
            headers
          )
          assert.equal(errors?.[0]?.extensions?.code, 'UNAUTHENTICATED', JSON.stringify(errors))
          const rows = await env.server.db('drafts').where('text', 'changed')
          assert.equal(rows.length, 0)
        })
      }
    })
  },
  createAuthApp
)
