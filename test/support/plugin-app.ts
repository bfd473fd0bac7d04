import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa, rest } from '@feathersjs/koa'
import socketio from '@feathersjs/socketio'
import type { Knex } from 'knex'
import { errorHandler, feathersQuery, type FeathersQueryOptions } from '../../src'

/**
 * A bare Koa app with the plugin and nothing else: the error handler (quiet unless `quietErrors: false`, since
 * tests provoke errors on purpose), the body parser, and `feathersQuery` over `db` with `resources` and `plugin`
 * options. What the test fixtures' app factories have in common. With `transports`, Feathers' REST and socket.io
 * transports too (configured before the plugin, as it requires), for Feathers clients.
 */
export function pluginApp(
  db: Knex,
  resources: FeathersQueryOptions['resources'],
  options: {
    plugin?: Partial<Omit<FeathersQueryOptions, 'Model' | 'resources'>>
    bodyParser?: Parameters<typeof bodyParser>[0]
    quietErrors?: boolean
    transports?: boolean
  } = {}
) {
  const app = koa(feathers())
  app.use(options.quietErrors === false ? errorHandler() : errorHandler(() => {}))
  app.use(bodyParser(options.bodyParser))
  if (options.transports) {
    app.configure(rest())
    app.configure(socketio())
  }
  app.configure(feathersQuery({ Model: db, resources, ...options.plugin }))
  return { app, db }
}
