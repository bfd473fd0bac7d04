import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa } from '@feathersjs/koa'
import knex from 'knex'
import { errorHandler, feathersQuery, type GraphqlOptions, type ResourceDefinition } from '../../src'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { todoItemResource } from '../../example/resources/todo-item'
import { subTaskResource } from '../../example/resources/sub-task'
import type { AppFactory } from './server'

/**
 * The example's resources in an app of their own, for tests of plugin options: the bare middleware, the
 * GraphQL options and body parser limits given, no application hooks. `resources` replaces the example's
 * definitions (e.g. with other options), on the same tables.
 */
export function exampleResourcesApp(options: {
  graphql?: GraphqlOptions
  bodyParser?: Parameters<typeof bodyParser>[0]
  quietErrors?: boolean
  resources?: ResourceDefinition[]
}): AppFactory {
  return async (databaseUrl) => {
    const db = knex(knexConfig(databaseUrl))
    await migrateLatest(db)
    const app = koa(feathers())
    app.use(options.quietErrors ? errorHandler(() => {}) : errorHandler())
    app.use(bodyParser(options.bodyParser))
    const resources = options.resources ?? [todoItemResource, subTaskResource]
    app.configure(feathersQuery({ Model: db, resources, graphql: options.graphql }))
    return { app, db }
  }
}
