import configuration from '@feathersjs/configuration'
import { ConfigurationError, gracefulShutdown } from 'feathers-query'
import { createApp } from './app'
import { redact } from './database'

interface Settings {
  host: string
  port: number
  databaseUrl: string
  syncUrl?: string
  syncKey?: string
}

async function main() {
  const settings = configuration()() as unknown as Settings
  let started
  try {
    started = await createApp(settings)
  } catch (error) {
    if (error instanceof ConfigurationError) throw error
    const reason = (error as Error).message || (error as { code?: string }).code
    throw new Error(`Cannot use the database at ${redact(settings.databaseUrl)}: ${reason}`)
  }
  const { app } = started
  const server = await app.listen(settings.port, settings.host)
  // SIGTERM and SIGINT (Ctrl-C) let requests in flight finish and tell WebSocket clients to reconnect.
  gracefulShutdown(app, server)
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : settings.port
  const base = `http://${settings.host}:${port}`
  console.log(
    [
      `feathers-query example on ${redact(settings.databaseUrl)}`,
      `  REST      ${base}/todo-items  ${base}/sub-tasks  ${base}/tags  ${base}/todo-item-tags (links)`,
      `  CSV       ${base}/todo-items/export  (aggregates ${base}/todo-items/aggregate)`,
      `  GraphQL   ${base}/graphql  (GraphiQL ${base}/graphiql)`,
      `  OpenAPI   ${base}/openapi.json  (Swagger UI ${base}/docs)`,
      `  Health    ${base}/health/ready  ${base}/health/live`,
      `  Home      ${base}/`
    ].join('\n')
  )
}

main().catch((error) => {
  console.error(
    error instanceof Error ? `${error.name === 'Error' ? 'Error' : error.name}: ${error.message}` : error
  )
  process.exit(1)
})
