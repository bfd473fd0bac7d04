import { createApp } from '../../example/app'
import { gracefulShutdown } from '../../src'
import { runServer } from '../../bench/support/run-server'

/**
 * The example app in a process of its own, stopped by `gracefulShutdown` (bounded by SHUTDOWN_TIMEOUT ms).
 * `GET /slow` answers after SLOW_MS ms and prints `SLOW` when it begins, so that a test can send the signal
 * while it is in flight.
 */
async function main() {
  const { app } = await createApp({ databaseUrl: process.env.DATABASE_URL ?? 'sqlite::memory:' })
  app.use(async (ctx, next) => {
    if (ctx.path !== '/slow') return next()
    console.log('SLOW')
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.SLOW_MS ?? 1000)))
    ctx.body = { finished: true }
  })
  const server = await app.listen(0)
  gracefulShutdown(app, server, { timeout: Number(process.env.SHUTDOWN_TIMEOUT ?? 5000) })
  return server
}

runServer(main)
