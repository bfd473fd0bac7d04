import type { Knex } from 'knex'

/**
 * The reads of the benchmarks' hand-written servers (the raw Koa + knex handler, and the GraphQL floor that
 * puts graphql-http and graphql-js on top of the same reads): the example's SQL written by hand through knex,
 * each answering what the example answers.
 */
const COLUMNS = ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority']
const LIST_COLUMNS = ['id', 'title', 'completed', 'created', 'priority']
const SUB_COLUMNS = ['id', 'title', 'todoItemId']

type Dialect = 'sqlite' | 'mysql' | 'postgres'

/** The day of `created`, as each database is best asked for it. */
const DAY: Record<Dialect, string> = {
  sqlite: "date(created / 1000, 'unixepoch')",
  mysql: 'DATE(created)',
  postgres: "date_trunc('day', created)"
}

function dialectOf(db: Knex): Dialect {
  const client = String(db.client.config.client)
  if (client.includes('sqlite')) return 'sqlite'
  return client.startsWith('pg') || client.startsWith('postgres') ? 'postgres' : 'mysql'
}

const toIso = (value: unknown) =>
  (value instanceof Date ? value : new Date(value as string | number)).toISOString()

/** The example's SQL-computed `subTasksCount`, which REST reads with every record: the same subquery. */
export const subTasksCountColumn = (db: Knex) =>
  db.raw('(SELECT COUNT(*) FROM ?? WHERE ?? = ??) AS ??', [
    'sub_tasks as counted',
    'counted.todoItemId',
    'todo_items.id',
    'subTasksCount'
  ])

const withSubTasksCount = (db: Knex) => [...COLUMNS, subTasksCountColumn(db)]

/** A page of todo items (one row more than asked, to tell whether there is a next page). */
const page = (db: Knex, columns: Array<string | Knex.Raw>, completed: boolean, limit: number) =>
  db('todo_items')
    .select(columns)
    .where('completed', completed)
    .orderBy('id')
    .limit(limit + 1)

/**
 * A record as the example's REST routes answer it: booleans, ISO dates and the computed `age` (milliseconds
 * since creation), not the values as the driver returns them (SQLite's 1/0 and epoch milliseconds).
 */
export const restRecord = (row: Record<string, unknown>) => {
  const created = toIso(row.created)
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    completed: Boolean(row.completed),
    created,
    updated: toIso(row.updated),
    age: Date.now() - Date.parse(created),
    priority: row.priority,
    subTasksCount: Number(row.subTasksCount)
  }
}

export interface ListNode {
  id: string
  title: unknown
  completed: boolean
  created: string
  priority: unknown
}

export const listNode = (item: Record<string, unknown>): ListNode => ({
  id: String(item.id),
  title: item.title,
  completed: Boolean(item.completed),
  created: toIso(item.created),
  priority: item.priority
})

/** REST's list: the same two statements as the example's, the page and (totalCount is enabled) the count. */
export async function restList(db: Knex, completed: boolean, limit: number) {
  const rows = await page(db, withSubTasksCount(db), completed, limit)
  const [{ total }] = await db('todo_items').where('completed', completed).count({ total: '*' })
  return {
    pageInfo: { hasNextPage: rows.length > limit, hasPreviousPage: false },
    nodes: rows.slice(0, limit).map(restRecord),
    totalCount: Number(total)
  }
}

/** REST's get. */
export async function restGet(db: Knex, id: number) {
  return restRecord(await db('todo_items').select(withSubTasksCount(db)).where('id', id).first())
}

/** The GraphQL list's page: its nodes, as the example answers them. */
export async function todoItemNodes(db: Knex, completed: boolean, first: number) {
  return (await page(db, LIST_COLUMNS, completed, first)).slice(0, first).map(listNode)
}

/** Each parent's first `perParent` sub tasks, in one statement, as the edges of their connections. */
export async function subTaskEdgesOf(db: Knex, ids: number[], perParent: number) {
  const subTasks = await db
    .select('*')
    .from(
      db('sub_tasks')
        .select(SUB_COLUMNS)
        .select(db.raw('ROW_NUMBER() OVER (PARTITION BY ?? ORDER BY ?? ASC) AS rn', ['todoItemId', 'id']))
        .whereIn('todoItemId', ids)
        .as('ranked')
    )
    .where('rn', '<=', perParent + 1)
    .orderBy(['todoItemId', 'rn'])
  const byParent = new Map<number, Array<{ node: { id: string; title: string } }>>()
  for (const subTask of subTasks) {
    const list = byParent.get(subTask.todoItemId) ?? []
    if (list.length < perParent) list.push({ node: { id: String(subTask.id), title: subTask.title } })
    byParent.set(subTask.todoItemId, list)
  }
  return byParent
}

/** `todoItem(id) { id title }`. */
export async function oneTodoItem(db: Knex, id: number) {
  const item = await db('todo_items').select(['id', 'title']).where('id', id).first()
  return item ? { id: String(item.id), title: item.title } : null
}

/** `todoItemAggregate { groupBy { completed } count { id } avg { priority } }`. */
export async function aggregateByCompleted(db: Knex) {
  const rows = await db('todo_items')
    .select('completed')
    .count({ count: 'id' })
    .avg({ avg: 'priority' })
    .groupBy('completed')
    .orderBy('completed')
  return rows.map((row: Record<string, unknown>) => ({
    groupBy: { completed: Boolean(row.completed) },
    count: { id: Number(row.count) },
    avg: { priority: Number(row.avg) }
  }))
}

/** `todoItemAggregate { groupBy { created(by: DAY) } count { id } }`. */
export async function aggregateByDay(db: Knex) {
  const dialect = dialectOf(db)
  const day = db.raw(DAY[dialect])
  const rows = await db('todo_items').select({ day }).count({ count: 'id' }).groupBy(day).orderBy(day)
  return rows.map((row: Record<string, unknown>) => ({
    groupBy: { created: toIso(dialect === 'sqlite' ? `${row.day}T00:00:00Z` : row.day) },
    count: { id: Number(row.count) }
  }))
}
