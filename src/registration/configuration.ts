import { Ajv } from '@feathersjs/schema'
import { Type, type Static, type TObject, type TOptional, type TInteger } from '@sinclair/typebox'
import { ConfigurationError } from '../common/errors'
import { DEFAULTS } from '../resource/defaults'

function positiveIntegers<K extends string>(keys: readonly K[]): TObject<Record<K, TOptional<TInteger>>> {
  const properties = Object.fromEntries(keys.map((key) => [key, Type.Optional(Type.Integer({ minimum: 1 }))]))
  return Type.Object(properties as Record<K, TOptional<TInteger>>, { additionalProperties: false })
}

const queryLimitNames = Object.keys(DEFAULTS.queryLimits) as Array<keyof typeof DEFAULTS.queryLimits>
const graphqlLimitNames = Object.keys(DEFAULTS.graphqlLimits) as Array<keyof typeof DEFAULTS.graphqlLimits>

/**
 * The plugin's options that can live in the application's configuration (`config/default.json`, key
 * `feathersQuery`), as JSON: what `feathersQuery()` takes from code only (the knex instance, resources,
 * schema parts, a logger) is left out. Add it to the CLI app's `configurationSchema` so that Feathers'
 * configuration validates it with the rest; the plugin validates it too, for apps that do not.
 */
export const feathersQueryConfiguration = Type.Object(
  {
    graphql: Type.Optional(
      Type.Union([
        Type.Literal(false),
        Type.Object(
          {
            path: Type.Optional(Type.String({ pattern: '^/' })),
            subscriptions: Type.Optional(Type.Boolean()),
            maxBatchOperations: Type.Optional(
              Type.Union([Type.Literal(false), Type.Integer({ minimum: 0 })])
            ),
            limits: Type.Optional(positiveIntegers(graphqlLimitNames)),
            // A manifest's path or the manifest itself: the function form is given in code.
            trustedDocuments: Type.Optional(
              Type.Object(
                {
                  documents: Type.Union([Type.String(), Type.Record(Type.String(), Type.String())]),
                  mode: Type.Optional(Type.Union([Type.Literal('enforce'), Type.Literal('allow-any')]))
                },
                { additionalProperties: false }
              )
            )
          },
          { additionalProperties: false }
        )
      ])
    ),
    openapi: Type.Optional(
      Type.Union([
        Type.Literal(false),
        Type.Object(
          {
            path: Type.Optional(Type.String({ pattern: '^/' })),
            info: Type.Optional(
              Type.Object({ title: Type.Optional(Type.String()), version: Type.Optional(Type.String()) })
            ),
            // An OpenAPI Security Scheme Object, checked no further than its type.
            securityScheme: Type.Optional(
              Type.Union([
                Type.Literal(false),
                Type.Object({
                  type: Type.Union(
                    ['http', 'apiKey', 'oauth2', 'openIdConnect', 'mutualTLS'].map((type) =>
                      Type.Literal(type)
                    )
                  )
                })
              ])
            )
          },
          { additionalProperties: false }
        )
      ])
    ),
    limits: Type.Optional(positiveIntegers(queryLimitNames)),
    realtime: Type.Optional(positiveIntegers(['maxConnectionsPerUser'])),
    checkSchema: Type.Optional(Type.Boolean()),
    health: Type.Optional(
      Type.Union([
        Type.Boolean(),
        Type.Object(
          {
            path: Type.Optional(Type.String({ pattern: '^/' })),
            timeout: Type.Optional(Type.Integer({ minimum: 1 }))
          },
          { additionalProperties: false }
        )
      ])
    ),
    caching: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          cacheControl: Type.Optional(Type.String({ minLength: 1 })),
          ignoreHeaders: Type.Optional(Type.Array(Type.String({ minLength: 1 })))
        },
        { additionalProperties: false }
      )
    ),
    // The budgets' key function and Redis client are given in code, the rest may be configured.
    budgets: Type.Optional(
      Type.Object(
        {
          window: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^\\d+(ms|s|m|h|d)$' })]),
          graphqlCost: Type.Optional(Type.Integer({ minimum: 1 })),
          rows: Type.Optional(Type.Integer({ minimum: 1 })),
          exportRows: Type.Optional(Type.Integer({ minimum: 1 })),
          subscriptions: Type.Optional(Type.Integer({ minimum: 1 }))
        },
        { additionalProperties: false }
      )
    ),
    live: Type.Optional(
      Type.Object(
        {
          coalesceMs: Type.Optional(Type.Integer({ minimum: 0 })),
          maxQuestions: Type.Optional(Type.Integer({ minimum: 1 })),
          maxConcurrentComputations: Type.Optional(Type.Integer({ minimum: 1 })),
          maxPerConnection: Type.Optional(Type.Integer({ minimum: 1 })),
          path: Type.Optional(Type.String({ minLength: 1 }))
        },
        { additionalProperties: false }
      )
    ),
    sqlite: Type.Optional(
      Type.Object(
        {
          busyTimeout: Type.Optional(Type.Integer({ minimum: 0 })),
          reuseStatements: Type.Optional(Type.Boolean())
        },
        { additionalProperties: false }
      )
    )
  },
  { $id: 'FeathersQueryConfiguration', additionalProperties: false }
)

export type FeathersQueryConfiguration = Static<typeof feathersQueryConfiguration>

/** Feathers' `paginate` setting as the plugin takes it: the application's, or a registration's own. */
export const paginateConfiguration = Type.Object(
  { default: Type.Optional(Type.Integer({ minimum: 1 })), max: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false }
)

const ajv = new Ajv({ allErrors: true, strict: false })
const validConfiguration = ajv.compile(feathersQueryConfiguration)
const validPaginate = ajv.compile(paginateConfiguration)

function check(valid: typeof validConfiguration, value: unknown, where: string) {
  if (valid(value)) return
  const errors = valid.errors ?? []
  // Of a union (`graphql: false | {...}`), the member the value was meant to be says what is wrong.
  const deeper = (path: string) => errors.some((other) => other.instancePath.startsWith(`${path}/`))
  const otherMember = (error: (typeof errors)[number]) =>
    error.keyword === 'anyOf' || (['type', 'const'].includes(error.keyword) && deeper(error.instancePath))
  const relevant = errors.filter((error) => !otherMember(error))
  const problems = relevant.map((error) => {
    const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.')
    const extra = error.keyword === 'additionalProperties' ? ` (${error.params.additionalProperty})` : ''
    return `${path || '(root)'} ${error.message}${extra}`
  })
  throw new ConfigurationError(`${where} is invalid: ${problems.join('; ')}`)
}

/** The application's `feathersQuery` configuration, checked; empty when it has none. */
export function configuredOptions(app: { get(name: string): unknown }): FeathersQueryConfiguration {
  const configured = app.get('feathersQuery')
  if (configured === undefined || configured === null) return {}
  check(validConfiguration, configured, "The configuration's feathersQuery")
  return configured as FeathersQueryConfiguration
}

export interface PageSizeSetting {
  default?: number
  max?: number
}

/** A `paginate` setting, checked: positive integers, the default no larger than the maximum. */
export function checkedPaginate(paginate: unknown, where: string): PageSizeSetting | undefined {
  if (paginate === undefined || paginate === null) return undefined
  if (paginate === false) {
    throw new ConfigurationError(
      `${where}: resources always page; a call asks for every record with params.paginate = false`
    )
  }
  check(validPaginate, paginate, where)
  const sizes = paginate as PageSizeSetting
  if (sizes.default !== undefined && sizes.max !== undefined && sizes.default > sizes.max) {
    throw new ConfigurationError(`${where}: default ${sizes.default} is larger than max ${sizes.max}`)
  }
  return sizes
}
