import Koa from 'koa'
import { koaBody } from 'koa-body'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../../example/database'
import { memoryProbe } from './memory-probe'
import { runServer } from './run-server'
import {
  aggregateByCompleted,
  aggregateByDay,
  oneTodoItem,
  restGet,
  restList,
  subTaskEdgesOf,
  todoItemNodes
} from './raw-reads'

/**
 * The baseline of the HTTP benchmarks: a minimal Koa handler per scenario that runs the same SQL through
 * knex, written by hand the way a developer would, and answers the same JSON. No Feathers, no validation, no
 * GraphQL, no hooks. It receives the same HTTP request as the example server (a GraphQL scenario's handler
 * is POSTed the same JSON body, which it reads as any Koa handler of a POST would: koa-body, the parser
 * Feathers' Koa transport uses), so that both sides of a ratio read the same bytes.
 */
type Handler = (db: Knex, ctx: Koa.Context) => Promise<unknown>

const routes: Record<string, Handler> = {
  '/todo-items': (db, ctx) => restList(db, ctx.query.completed === 'true', Number(ctx.query.limit ?? 25)),
  '/graphql-list': async (db) => {
    const nodes = await todoItemNodes(db, false, 25)
    return { data: { todoItems: { edges: nodes.map((node) => ({ node })) } } }
  },
  '/graphql-nested': async (db) => {
    const nodes = await todoItemNodes(db, false, 25)
    const byParent = await subTaskEdgesOf(
      db,
      nodes.map((node) => Number(node.id)),
      10
    )
    const edges = nodes.map((node) => ({
      node: { ...node, subTasks: { edges: byParent.get(Number(node.id)) ?? [] } }
    }))
    return { data: { todoItems: { edges } } }
  },
  '/graphql-one': async (db) => ({ data: { todoItem: await oneTodoItem(db, 42) } }),
  '/aggregate-completed': async (db) => ({ data: { todoItemAggregate: await aggregateByCompleted(db) } }),
  '/aggregate-day': async (db) => ({ data: { todoItemAggregate: await aggregateByDay(db) } })
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
    if (
      route &&
      (ctx.method === 'GET' || typeof (ctx.request.body as { query?: unknown })?.query === 'string')
    ) {
      ctx.body = await route(db, ctx)
      return
    }
    const one = /^\/todo-items\/(\d+)$/.exec(ctx.path)
    if (one) {
      ctx.body = await restGet(db, Number(one[1]))
      return
    }
    ctx.status = 404
  })
  return app.listen(0)
}

runServer(main)
