import type { Application } from '@feathersjs/koa'
import type { FeathersQueryOptions } from './registration/options'
import { registryOf } from './registration/registry'
import './declarations'

export type { FeathersQueryOptions } from './registration/options'

/**
 * `app.configure(feathersQuery({ Model, resources }))` registers one Feathers service per resource at its
 * base path (with the resource in the service options) and serves the HTTP surfaces that call them. Call it
 * from each service file, the way the Feathers CLI registers services, as many times as there are files:
 * relations between the resources of different calls are linked, and one GraphQL schema and one OpenAPI
 * document built, when the application is set up (`app.listen`). Configure it where a Feathers CLI app
 * configures its services: after the Koa error handler, the body parser and the transports (`rest()`,
 * `socketio()`); start-up fails with a message when a transport comes later.
 */
export function feathersQuery(options: FeathersQueryOptions) {
  return (app: Application) => {
    registryOf(app).register(options)
  }
}
