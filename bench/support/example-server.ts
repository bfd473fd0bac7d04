import type { Application } from '@feathersjs/koa'
import { createApp } from '../../example/app'
import { memoryProbe } from './memory-probe'
import { runServer } from './run-server'

/**
 * The example app on DATABASE_URL (its events shared with other instances through SYNC_URL, SYNC_KEY when
 * set), in a process of its own so that its memory and speed are its own.
 * `GET /__statements` answers how many SQL statements ran so far (for statements-per-request figures);
 * `GET /__gc`, `GET /__heap` and `GET /__cpu` read its memory and CPU time when started with --expose-gc (see `memoryProbe`).
 */
/**
 * `COUNT_REUSE=off`: every list reads its count, as the bare handler does, so that the two do the same work.
 * The plugin reuses a count while the application's write generation stands still; an event of a service of
 * the bench's own moves it on before each request (what a write would do), at the cost of one emit and its
 * publishing to no connection.
 */
function countEveryList(app: Application) {
  app.use('bench-writes', {
    async find() {
      return []
    }
  })
  const writes = app.service('bench-writes')
  app.middleware.unshift((_ctx, next) => {
    writes.emit('created', {})
    return next()
  })
}

async function main() {
  const { SYNC_URL: syncUrl, SYNC_KEY: syncKey } = process.env
  const { app, db } = await createApp({ databaseUrl: process.env.DATABASE_URL!, syncUrl, syncKey })
  let statements = 0
  db.on('query', () => statements++)
  if (process.env.COUNT_REUSE === 'off') countEveryList(app)
  app.use(async (ctx, next) => {
    if (ctx.path === '/__statements') {
      ctx.body = { statements }
      return
    }
    const memory = memoryProbe(ctx.path)
    if (memory) ctx.body = memory
    else return next()
  })
  return app.listen(0)
}

runServer(main)
