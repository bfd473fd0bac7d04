/**
 * Prints the GraphQL schema (SDL) the example application serves: `npm run schema`.
 * The app is built on an in-memory database, so the output is exactly what `/graphql` answers with.
 */
import { printSchema } from 'graphql'
import { feathersQueryState } from 'feathers-query'
import { createApp } from '../example/app'

async function main() {
  const { app, db } = await createApp({ databaseUrl: 'sqlite::memory:' })
  try {
    await app.setup()
    const schema = feathersQueryState(app)?.graphqlSchema
    if (!schema) throw new Error('The example app serves no GraphQL schema')
    process.stdout.write(printSchema(schema) + '\n')
  } finally {
    await db.destroy()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
