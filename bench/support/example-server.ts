import { createApp } from '../../example/app'

/** The example app on DATABASE_URL, in a process of its own so that its memory can be measured. */
async function main() {
  const { app } = await createApp({ databaseUrl: process.env.DATABASE_URL! })
  const server = await app.listen(0)
  const address = server.address()
  console.log(`READY ${typeof address === 'object' && address ? address.port : ''}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
