import { createApp } from '../../example/app'
import { memoryProbe } from './memory-probe'
import { runServer } from './run-server'

/**
 * The example app on DATABASE_URL (its events shared with other instances through SYNC_URL, SYNC_KEY when
 * set), in a process of its own so that its memory and speed are its own.
 * `GET /__statements` answers how many SQL statements ran so far (for statements-per-request figures);
 * `GET /__gc` and `GET /__heap` read its memory when started with --expose-gc (see `memoryProbe`).
 */
async function main() {
  const { SYNC_URL: syncUrl, SYNC_KEY: syncKey } = process.env
  const { app, db } = await createApp({ databaseUrl: process.env.DATABASE_URL!, syncUrl, syncKey })
  let statements = 0
  db.on('query', () => statements++)
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
