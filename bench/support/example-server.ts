import { createApp } from '../../example/app'

/**
 * The example app on DATABASE_URL, in a process of its own so that its memory and speed are its own.
 * `GET /__statements` answers how many SQL statements ran so far (for statements-per-request figures).
 */
async function main() {
  const { app, db } = await createApp({ databaseUrl: process.env.DATABASE_URL! })
  let statements = 0
  db.on('query', () => statements++)
  app.use(async (ctx, next) => {
    if (ctx.path !== '/__statements') return next()
    ctx.body = { statements }
  })
  const server = await app.listen(0)
  const address = server.address()
  console.log(`READY ${typeof address === 'object' && address ? address.port : ''}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
