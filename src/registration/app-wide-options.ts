import { ConfigurationError } from '../common/errors'
import type { Logger } from '../common/logger'
import type { GraphqlOptions } from '../graphql/execution/endpoint'
import type { OpenApiOptions } from '../openapi/middleware'
import type { RealtimeOptions } from '../feathers/connections-per-user'
import { checkHealthOptions, type HealthOptions } from '../operations/readiness'
import type { FeathersQueryConfiguration } from './configuration'
import type { CachingOptions } from '../feathers/conditional-read'
import { resolveBudgets, type BudgetOptions } from '../budgets/options'
import type { LiveOptions } from '../live/live-options'

export interface SurfaceOptions {
  graphql?: GraphqlOptions | false
  openapi?: OpenApiOptions | false
  logger?: Logger
  realtime?: RealtimeOptions
  checkSchema?: boolean
  health?: HealthOptions | boolean
  caching?: CachingOptions
  budgets?: BudgetOptions
  live?: LiveOptions
}

const APP_WIDE = [
  'graphql',
  'openapi',
  'logger',
  'realtime',
  'checkSchema',
  'health',
  'caching',
  'budgets',
  'live'
] as const

export interface AppWideOptions {
  /** Takes the application-wide options a call gives; each may be given by one call only. */
  take(options: SurfaceOptions, call: string): void
  /** The options as the calls and the configuration left them. */
  current(): SurfaceOptions
}

/**
 * The options that hold for the whole application (the GraphQL endpoint, the OpenAPI document, the logger):
 * from the configuration's `feathersQuery`, and from whichever `feathersQuery()` call gives them (its
 * object over the configuration's). Two calls giving the same one is a start-up error naming both, rather
 * than one silently winning.
 */
export function appWideOptions(configuration: FeathersQueryConfiguration): AppWideOptions {
  const options: SurfaceOptions = {
    graphql: configuration.graphql,
    openapi: configuration.openapi as OpenApiOptions | false | undefined,
    realtime: configuration.realtime,
    checkSchema: configuration.checkSchema,
    health: configuration.health,
    caching: configuration.caching,
    budgets: configuration.budgets as BudgetOptions | undefined,
    live: configuration.live
  }
  const givenBy = new Map<string, string>()
  return {
    take(given, call) {
      for (const name of APP_WIDE) {
        if (given[name] === undefined) continue
        if (givenBy.has(name)) {
          throw new ConfigurationError(
            `feathersQuery({ ${name} }) is given twice: by ${givenBy.get(name)} and by ${call}. It holds ` +
              'for the whole application: give it once (or in the configuration, key feathersQuery).'
          )
        }
        if (name === 'health') checkHealthOptions(given.health as HealthOptions | boolean)
        if (name === 'budgets') resolveBudgets(given.budgets)
        givenBy.set(name, call)
        const configured = options[name]
        options[name] =
          configured && given[name] && typeof given[name] === 'object' && name !== 'logger'
            ? ({ ...(configured as object), ...given[name] } as never)
            : (given[name] as never)
      }
    },
    current: () => options
  }
}
