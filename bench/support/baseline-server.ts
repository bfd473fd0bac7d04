import Koa from 'koa'
import knex from 'knex'
import { knexConfig } from '../../example/database'

/**
 * The baseline of the HTTP benchmarks: a minimal Koa handler per scenario that runs the same SQL through
 * knex and returns JSON. No Feathers, no validation, no GraphQL, no hooks.
 */
const COLUMNS = ['id', 'title', 'description', 'completed', 'created', 'updated', 'priority']
const SUB_COLUMNS = ['id', 'title', 'todoItemId']

async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  const app = new Koa()
  app.use(async (ctx) => {
    if (ctx.path === '/todo-items') {
      // The same two statements as the example's list: the page (one row more than asked) and, because the
      // example enables totalCount, the count.
      const limit = Number(ctx.query.limit ?? 25)
      const completed = ctx.query.completed === 'true'
      const rows = await db('todo_items').select(COLUMNS).where('completed', completed).orderBy('id').limit(limit + 1)
      const [{ total }] = await db('todo_items').where('completed', completed).count({ total: '*' })
      ctx.body = {
        pageInfo: { hasNextPage: rows.length > limit, hasPreviousPage: false },
        nodes: rows.slice(0, limit),
        totalCount: Number(total)
      }
      return
    }
    const one = /^\/todo-items\/(\d+)$/.exec(ctx.path)
    if (one) {
      ctx.body = await db('todo_items').select(COLUMNS).where('id', Number(one[1])).first()
      return
    }
    if (ctx.path === '/nested') {
      // The two SELECTs of a page of 25 todo items with each one's first 10 sub tasks, written by hand.
      const items = await db('todo_items').select(['id', 'title']).orderBy('id').limit(26)
      const ids = items.slice(0, 25).map((item) => item.id)
      const subTasks = await db
        .select('*')
        .from(
          db('sub_tasks')
            .select(SUB_COLUMNS)
            .select(db.raw('ROW_NUMBER() OVER (PARTITION BY ?? ORDER BY ?? ASC) AS rn', ['todoItemId', 'id']))
            .whereIn('todoItemId', ids)
            .as('ranked')
        )
        .where('rn', '<=', 11)
        .orderBy(['todoItemId', 'rn'])
      const byParent = new Map<number, unknown[]>()
      for (const subTask of subTasks) {
        const list = byParent.get(subTask.todoItemId) ?? []
        list.push({ node: { id: subTask.id, title: subTask.title } })
        byParent.set(subTask.todoItemId, list)
      }
      ctx.body = {
        data: {
          todoItems: {
            edges: items.slice(0, 25).map((item) => ({
              node: { id: item.id, title: item.title, subTasks: { edges: (byParent.get(item.id) ?? []).slice(0, 10) } }
            }))
          }
        }
      }
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
