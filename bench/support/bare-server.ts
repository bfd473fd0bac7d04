import Koa from 'koa'
import knex from 'knex'
import { knexConfig } from '../../example/database'
import { bareReads } from './bare-reads'
import { memoryProbe } from './memory-probe'
import { runServer } from './run-server'

/**
 * The floor of the HTTP benchmarks: the least a Node server can do to answer the scenarios' JSON. One Koa
 * middleware switching on the path, hand-written SQL (`bare-reads.ts`), no body parser, no router, no
 * validation; its GraphQL scenarios are plain GETs answered with the JSON the GraphQL answer has.
 */
async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  const reads = bareReads(db)
  const app = new Koa()
  app.use(async (ctx) => {
    const memory = memoryProbe(ctx.path)
    const one = /^\/todo-items\/(\d+)$/.exec(ctx.path)
    if (memory) ctx.body = memory
    else if (one) ctx.body = await reads.get(Number(one[1]))
    else if (ctx.path === '/todo-items')
      ctx.body = await reads.list(ctx.query.completed === 'true', Number(ctx.query.limit ?? 25))
    else if (ctx.path === '/graphql-one') ctx.body = await reads.graphqlOne(42)
    else if (ctx.path === '/graphql-list') ctx.body = await reads.graphqlList(false, 25)
    // Koa answers 404 for a body left unset.
  })
  return app.listen(0)
}

runServer(main)
