import { bodyParser } from '@feathersjs/koa'
import knex from 'knex'
import type { FeathersQueryOptions, GraphqlOptions, QueryLimits, ResourceDefinition } from '../../src'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { exampleResources } from '../../example/resources'
import type { AppFactory } from './server'
import { pluginApp } from './plugin-app'

/**
 * The example's resources in an app of their own, for tests of plugin options: the bare middleware, the
 * GraphQL options, query limits, body parser limits and other plugin options given, no application hooks.
 * `resources` replaces the example's definitions (e.g. with other options), on the same tables.
 */
export function exampleResourcesApp(options: {
  graphql?: GraphqlOptions
  limits?: QueryLimits
  bodyParser?: Parameters<typeof bodyParser>[0]
  quietErrors?: boolean
  /** Plugin options besides the knex instance and the resources. */
  plugin?: Partial<Omit<FeathersQueryOptions, 'Model' | 'resources'>>
  resources?: ResourceDefinition[]
}): AppFactory {
  return async (databaseUrl) => {
    const db = knex(knexConfig(databaseUrl))
    await migrateLatest(db)
    return pluginApp(db, options.resources ?? exampleResources, {
      quietErrors: options.quietErrors ?? false,
      bodyParser: options.bodyParser,
      plugin: { graphql: options.graphql, limits: options.limits, ...options.plugin }
    })
  }
}
