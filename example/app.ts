import { feathers } from '@feathersjs/feathers'
import { koa, bodyParser, rest, serveStatic, type Application } from '@feathersjs/koa'
import socketio from '@feathersjs/socketio'
import knex, { type Knex } from 'knex'
import sync from 'feathers-sync'
import { resolve } from 'node:path'
import { ConfigurationError, errorHandler, feathersQuery, searchFields } from 'feathers-query'
import { graphiql, swaggerUi } from 'feathers-query/pages'
import { knexConfig, redact } from './database'
import { migrateLatest } from './migrations'
import { exampleResources } from './resources'
import { stampCreation, stampUpdate, stampUpsert } from './hooks/audit'

const EXAMPLE_QUERY = `{
  todoItems(paging: { first: 5 }) {
    totalCount
    edges {
      node {
        id
        title
        completed
        subTasks {
          edges {
            node {
              title
            }
          }
        }
      }
    }
  }
}
`

export interface ExampleSettings {
  databaseUrl: string
  /**
   * Several instances behind a load balancer: feathers-sync sends every service event to the other instances
   * through this broker (`redis://127.0.0.1:6379`; feathers-sync also speaks NATS and AMQP), so that a client
   * hears of a write whichever instance it is connected to. `syncKey` names the channel (one per deployment).
   */
  syncUrl?: string
  syncKey?: string
}

export interface ExampleApp {
  app: Application
  db: Knex
}

/** The example application: TodoItem, SubTask and Tag served over REST, CSV export and GraphQL. */
export async function createApp(settings: ExampleSettings): Promise<ExampleApp> {
  const db = knex(knexConfig(settings.databaseUrl))
  await migrateLatest(db)

  const app = koa(feathers())
  // Before the services: feathers-sync hooks into each service's events as it is registered.
  if (settings.syncUrl) {
    app.configure(sync({ uri: settings.syncUrl, ...(settings.syncKey ? { key: settings.syncKey } : {}) }))
  }
  app.use(errorHandler())
  // Deferred: API requests never pay for a file-system lookup; only what nothing else answered is a file.
  app.use(serveStatic(resolve(__dirname, '../public'), { defer: true }))
  // The interactive pages are the application's choice (an API in production may not want them); the plugin
  // serves the OpenAPI document they read and ships both pages, from local assets.
  app.use(swaggerUi({ path: '/docs', url: '/openapi.json', title: 'feathers-query example API' }))
  app.use(graphiql({ path: '/graphiql', endpoint: '/graphql', defaultQuery: EXAMPLE_QUERY }))
  app.use(bodyParser())
  // A complete Feathers app: Feathers' REST transport (its clients and the spec's routes share the paths) and
  // socket.io, configured before the services as the Feathers CLI does.
  app.configure(rest())
  app.configure(socketio())
  app.configure(
    feathersQuery({
      Model: db,
      resources: exampleResources,
      openapi: { path: '/openapi.json', info: { title: 'feathers-query example API', version: '0.1.0' } },
      // GET /health/ready (the database answers) and /health/live, for a load balancer or a container platform.
      health: true
    })
  )

  // The application's own rules are plain Feathers hooks; they hold for REST, CSV export and GraphQL.
  app.service('todo-items').hooks({
    before: {
      find: [searchFields(['title', 'description'])],
      create: [stampCreation],
      update: [stampUpdate],
      patch: [stampUpdate]
    }
  })
  app
    .service('sub-tasks')
    .hooks({ before: { create: [stampCreation], update: [stampUpdate], patch: [stampUpdate] } })
  // Tags are upserted by name (`upsert.key`): `upsert` is a Feathers custom method with hooks of its own.
  app.service('tags').hooks({
    before: { create: [stampCreation], update: [stampUpdate], patch: [stampUpdate], upsert: [stampUpsert] }
  } as never)

  // Real-time events go to every connection; a resource's events only to those whose user its `authorize`
  // admits to the record, whatever the publisher says.
  app.on('connection', (connection) => app.channel('everyone').join(connection))
  app.publish(() => app.channel('everyone'))

  // An instance that cannot reach the broker would serve writes whose events nobody else hears: fail start-up.
  if (settings.syncUrl) {
    await (app as unknown as { sync: { ready: Promise<unknown> } }).sync.ready.catch((error: Error) => {
      throw new ConfigurationError(`Cannot reach SYNC_URL ${redact(settings.syncUrl!)}: ${error.message}`)
    })
  }
  return { app, db }
}
