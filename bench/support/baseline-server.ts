import Koa from 'koa'
import { koaBody } from 'koa-body'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../../example/database'
import { memoryProbe } from './memory-probe'

/**
 * The baseline of the HTTP benchmarks: a minimal Koa handler per scenario that runs the same SQL through
 * knex, written by hand the way a developer would, and answers the same JSON. No Feathers, no validation, no
 * GraphQL, no hooks. It receives the same HTTP request as the example server (a GraphQL scenario's handler
 * is POSTed the same JSON body, which it reads as any Koa handler of a POST would: koa-body, the parser
 * Feathers' Koa transport uses), so that both sides of a ratio read the same bytes.
 */
const COLUMNS = ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority']

/** The example's SQL-computed `subTasksCount`, which REST reads with every record: the same subquery. */
const withSubTasksCount = (db: Knex) => [
  ...COLUMNS,
  db.raw('(SELECT COUNT(*) FROM ?? WHERE ?? = ??) AS ??', [
    'sub_tasks as counted',
    'counted.todoItemId',
    'todo_items.id',
    'subTasksCount'
  ])
]
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

const toIso = (value: unknown) => (value instanceof Date ? value : new Date(value as string | number)).toISOString()

/** A page of todo items (one row more than asked, to tell whether there is a next page). */
const page = (db: Knex, columns: Array<string | Knex.Raw>, completed: boolean, limit: number) =>
  db('todo_items').select(columns).where('completed', completed).orderBy('id').limit(limit + 1)

/** Each parent's first `perParent` sub tasks, in one statement. */
async function subTasksOf(db: Knex, ids: number[], perParent: number) {
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

/**
 * A record as the example's REST routes answer it: booleans, ISO dates and the computed `age` (milliseconds
 * since creation), not the values as the driver returns them (SQLite's 1/0 and epoch milliseconds).
 */
const restRecord = (row: Record<string, unknown>) => {
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

const listNode = (item: Record<string, unknown>) => ({
  id: String(item.id),
  title: item.title,
  completed: Boolean(item.completed),
  created: toIso(item.created),
  priority: item.priority
})

type Handler = (db: Knex, ctx: Koa.Context) => Promise<unknown>

const routes: Record<string, Handler> = {
  // The same two statements as the example's list: the page and, because the example enables totalCount,
  // the count.
  '/todo-items': async (db, ctx) => {
    const limit = Number(ctx.query.limit ?? 25)
    const completed = ctx.query.completed === 'true'
    const rows = await page(db, withSubTasksCount(db), completed, limit)
    const [{ total }] = await db('todo_items').where('completed', completed).count({ total: '*' })
    return {
      pageInfo: { hasNextPage: rows.length > limit, hasPreviousPage: false },
      nodes: rows.slice(0, limit).map(restRecord),
      totalCount: Number(total)
    }
  },
  '/graphql-list': async (db) => {
    const rows = await page(db, LIST_COLUMNS, false, 25)
    return { data: { todoItems: { edges: rows.slice(0, 25).map((item) => ({ node: listNode(item) })) } } }
  },
  '/graphql-nested': async (db) => {
    const items = (await page(db, LIST_COLUMNS, false, 25)).slice(0, 25)
    const byParent = await subTasksOf(
      db,
      items.map((item) => item.id),
      10
    )
    const edges = items.map((item) => ({
      node: { ...listNode(item), subTasks: { edges: byParent.get(item.id) ?? [] } }
    }))
    return { data: { todoItems: { edges } } }
  },
  '/graphql-one': async (db) => {
    const item = await db('todo_items').select(['id', 'title']).where('id', 42).first()
    return { data: { todoItem: { id: String(item.id), title: item.title } } }
  },
  '/aggregate-completed': async (db) => {
    const rows = await db('todo_items')
      .select('completed')
      .count({ count: 'id' })
      .avg({ avg: 'priority' })
      .groupBy('completed')
      .orderBy('completed')
    const groups = rows.map((row: Record<string, unknown>) => ({
      groupBy: { completed: Boolean(row.completed) },
      count: { id: Number(row.count) },
      avg: { priority: Number(row.avg) }
    }))
    return { data: { todoItemAggregate: groups } }
  },
  '/aggregate-day': async (db) => {
    const day = db.raw(DAY[dialectOf(db)])
    const rows = await db('todo_items')
      .select({ day })
      .count({ count: 'id' })
      .groupBy(day)
      .orderBy(day)
    const groups = rows.map((row: Record<string, unknown>) => ({
      groupBy: { created: toIso(dialectOf(db) === 'sqlite' ? `${row.day}T00:00:00Z` : row.day) },
      count: { id: Number(row.count) }
    }))
    return { data: { todoItemAggregate: groups } }
  }
}

async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  const app = new Koa()
  app.use(koaBody())
  app.use(async (ctx) => {
    const memory = memoryProbe(ctx.path)
    if (memory) {
      ctx.body = memory
      return
    }
    const route = routes[ctx.path]
    if (route && (ctx.method === 'GET' || typeof (ctx.request.body as { query?: unknown })?.query === 'string')) {
      ctx.body = await route(db, ctx)
      return
    }
    const one = /^\/todo-items\/(\d+)$/.exec(ctx.path)
    if (one) {
      ctx.body = restRecord(await db('todo_items').select(withSubTasksCount(db)).where('id', Number(one[1])).first())
      return
    }
    ctx.status = 404
  })
  const server = app.listen(0)
  await new Promise((resolve) => server.once('listening', resolve))
  const address = server.address()
  console.log(`READY ${typeof address === 'object' && address ? address.port : ''}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
