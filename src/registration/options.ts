import type { Knex } from 'knex'
import type { ResourceDefinition } from '../resource/definition'
import type { SqliteOptions } from '../dialect/better-sqlite3'
import type { GraphqlOptions } from '../graphql/execution/endpoint'
import type { OpenApiOptions } from '../openapi/middleware'
import type { QueryLimits } from '../resource/query-limits'
import type { Logger } from '../common/logger'
import type { RealtimeOptions } from '../feathers/connections-per-user'
import type { HealthOptions } from '../operations/readiness'
import type { PageSizeSetting } from './configuration'
import type { CachingOptions } from '../feathers/conditional-read'
import type { BudgetOptions } from '../budgets/options'
import type { LiveOptions } from '../live/live-options'

/** What one `feathersQuery()` call takes. */
export interface FeathersQueryOptions {
  /** The knex instance these resources' tables live in (the CLI app's `app.get('sqliteClient')`, ...). */
  Model?: Knex
  /** The resources this call registers (none for a call that gives only application-wide options). */
  resources?: ResourceDefinition[]
  /**
   * Page sizes of these resources where a resource sets none (`query.defaultResultSize`, `maxResultsSize`):
   * Feathers' `paginate` service option. Default: the application's `paginate` configuration.
   */
  paginate?: PageSizeSetting
  /** SQLite through better-sqlite3: how long a write waits for another process's lock, statement reuse. */
  sqlite?: SqliteOptions
  /** What a filter may hold on every surface, and the statements kept per shape (defaults in QueryLimits). */
  limits?: QueryLimits
  /**
   * For the whole application (give each of these in one call, or in the configuration's `feathersQuery`):
   * the GraphQL endpoint (at `/graphql` unless configured; `false` leaves it out).
   */
  graphql?: GraphqlOptions | false
  /** For the whole application: the OpenAPI document (at `/openapi.json` unless configured); `false` leaves it out. */
  openapi?: OpenApiOptions | false
  /** For the whole application: where server failures are logged (every surface and events; default console). */
  logger?: Logger
  /** For the whole application: the real-time (socket.io) connections one user may hold logged in (default 10). */
  realtime?: RealtimeOptions
  /**
   * For the whole application: at setup (`app.listen`), check that every resource's table has the columns its
   * schema needs, with types and nullability that fit, and fail naming each difference (default true).
   */
  checkSchema?: boolean
  /**
   * For the whole application: the readiness route `<path>/ready` (each database answers `select 1` within
   * `timeout`: 200, else 503) and the liveness route `<path>/live`; `true` for `/health`. Off unless given.
   */
  health?: HealthOptions | boolean
  /**
   * For the whole application: `ETag` and `Cache-Control` on REST reads and GraphQL GETs, and 304 without any
   * SQL for a request whose `If-None-Match` is still current (default on, `Cache-Control: private, no-cache`).
   */
  caching?: CachingOptions
  /**
   * For the whole application: what each caller (by `key`, default the user, else the address) may spend per
   * `window`: GraphQL cost, REST and socket.io rows, export rows, subscriptions; past it a 429 with
   * `Retry-After`. Counted in memory, or in Redis for every instance (`store: { redis }`). Off unless given.
   */
  budgets?: BudgetOptions
  /**
   * For the whole application: live queries (GraphQL subscriptions to a root query, the `live-queries` service
   * for Feathers clients): the window that coalesces writes, and how many distinct questions and
   * computations one process keeps.
   */
  live?: LiveOptions
}
