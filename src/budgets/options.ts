import type { Params } from '@feathersjs/feathers'
import { ConfigurationError } from '../common/errors'
import type { RedisBudgetClient } from './redis-store'

/** The units a budget counts, each measured as the plugin already measures it. */
export const BUDGET_UNITS = ['graphqlCost', 'rows', 'exportRows', 'subscriptions'] as const
export type BudgetUnit = (typeof BUDGET_UNITS)[number]

export interface BudgetOptions {
  /** How long a budget lasts before it starts again: milliseconds, or `'30s'`, `'1m'`, `'1h'`, `'1d'`. */
  window: number | string
  /** The GraphQL cost (as `graphql.limits.maxComplexity` counts it) a caller's operations may add up to. */
  graphqlCost?: number
  /** Records REST and socket.io reads answer (list pages, records got, aggregate groups). */
  rows?: number
  /** Rows CSV and NDJSON exports stream. */
  exportRows?: number
  /** GraphQL subscriptions started. */
  subscriptions?: number
  /**
   * Whose budget a call spends, from its params: a string, or undefined for no budget. Default: the
   * authenticated user's id, else the caller's IP address.
   */
  key?: (params: Params) => string | undefined
  /** Where the spending is counted: in this process (default), or in Redis, shared by every instance. */
  store?: 'memory' | { redis: RedisBudgetClient; prefix?: string }
}

export interface ResolvedBudgets {
  windowMs: number
  limits: Partial<Record<BudgetUnit, number>>
  key?: (params: Params) => string | undefined
  store: BudgetOptions['store']
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

function windowMilliseconds(window: unknown): number {
  if (typeof window === 'number' && Number.isSafeInteger(window) && window >= 1) return window
  const match = typeof window === 'string' ? /^(\d+)(ms|s|m|h|d)$/.exec(window.trim()) : null
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]] : 0
  if (ms >= 1 && Number.isSafeInteger(ms)) return ms
  throw new ConfigurationError(
    `budgets.window must be a positive number of milliseconds or a duration such as '30s', '1m', '1h', '1d'`
  )
}

const KNOWN = new Set<string>([...BUDGET_UNITS, 'window', 'key', 'store'])

/** The budgets in force, checked once at start-up; undefined without any. */
export function resolveBudgets(options: BudgetOptions | undefined): ResolvedBudgets | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('budgets must be an object: { window, graphqlCost?, rows?, ... }')
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN.has(name)) throw new ConfigurationError(`budgets.${name} is not an option`)
  }
  const limits: ResolvedBudgets['limits'] = {}
  for (const unit of BUDGET_UNITS) {
    const value = options[unit]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ConfigurationError(`budgets.${unit} must be a positive integer`)
    }
    limits[unit] = value
  }
  if (options.key !== undefined && typeof options.key !== 'function') {
    throw new ConfigurationError('budgets.key must be a function of the params')
  }
  const store = options.store
  if (
    store !== undefined &&
    store !== 'memory' &&
    (typeof store !== 'object' || typeof store.redis?.eval !== 'function')
  ) {
    throw new ConfigurationError("budgets.store must be 'memory' or { redis: <a node-redis v5 client> }")
  }
  return { windowMs: windowMilliseconds(options.window), limits, key: options.key, store }
}
