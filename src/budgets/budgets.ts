import { TooManyRequests } from '@feathersjs/errors'
import type { Application, Params } from '@feathersjs/feathers'
import { memoryStore, type BudgetStore } from './store'
import { redisStore } from './redis-store'
import type { BudgetUnit, ResolvedBudgets } from './options'
import { retryAfterSeconds } from './headers'

/** What a take from a caller's budget got, to be settled once the work's real cost is known. */
export interface Spending {
  key: string
  unit: BudgetUnit
  limit: number
  granted: number
  spent: number
  resetMs: number
}

/**
 * Where an HTTP request's params say how to answer with the budget's headers (`RateLimit-*`): the REST routes
 * and the GraphQL endpoint put a function here; Feathers' REST transport takes `context.http.headers`.
 */
export const BUDGET_HEADERS = Symbol.for('feathers-query.budgetHeaders')

type HeaderParams = Params & { [BUDGET_HEADERS]?: (headers: Record<string, string>) => void }

/** Tells the HTTP response (if the call has one) what is left of the budget it spent. */
export function answerBudgetHeaders(params: Params | undefined, headers: Record<string, string>) {
  ;(params as HeaderParams | undefined)?.[BUDGET_HEADERS]?.(headers)
}

interface CallerParams {
  user?: { id?: unknown; _id?: unknown }
  authentication?: { accessToken?: unknown; payload?: { sub?: unknown } }
  ip?: string
}

interface AuthenticationService {
  verifyAccessToken(token: string): Promise<{ sub?: unknown }>
}

/**
 * The default budget key: the authenticated user (the `user` hooks left in params, else the subject of the
 * access token the call carries, verified, as `authenticate('jwt')` would before the call's own hooks run),
 * else the caller's address. A token that does not verify counts as no token: its caller pays by address.
 */
async function defaultKey(app: Application, params: Params): Promise<string | undefined> {
  const { user, authentication, ip } = params as CallerParams
  const id = user?.id ?? user?._id
  if (id !== undefined && id !== null) return `user:${String(id)}`
  const verified = authentication?.payload?.sub
  if (verified !== undefined && verified !== null) return `user:${String(verified)}`
  const token = authentication?.accessToken
  const service = (app as { defaultAuthentication?: () => AuthenticationService | undefined })
    .defaultAuthentication
  if (typeof token === 'string' && service) {
    const subject = await service
      .call(app)
      ?.verifyAccessToken(token)
      .then((payload) => payload.sub)
      .catch(() => undefined)
    if (subject !== undefined && subject !== null) return `user:${String(subject)}`
  }
  return ip ? `address:${ip}` : undefined
}

/**
 * Each caller's budgets: how much GraphQL cost, REST and socket.io rows, export rows and subscriptions a caller
 * (a key) may spend per window. Work is taken from the budget before it runs: a refusal is a 429
 * `TooManyRequests` carrying when to try again.
 */
export class Budgets {
  private readonly store: BudgetStore

  constructor(
    private readonly app: Application,
    readonly options: ResolvedBudgets
  ) {
    const store = options.store
    this.store = store && store !== 'memory' ? redisStore(store.redis, store.prefix) : memoryStore()
  }

  /** Whether this unit has a budget at all. */
  counts(unit: BudgetUnit) {
    return this.options.limits[unit] !== undefined
  }

  /** Whose budget a call spends; undefined for none. */
  async keyOf(params: Params): Promise<string | undefined> {
    return this.options.key ? this.options.key(params) : defaultKey(this.app, params)
  }

  /**
   * Takes up to `want` (at least `minimum`) from the budget of the call's caller, or refuses with a 429;
   * undefined when the unit or the call has no budget.
   */
  async take(params: Params, unit: BudgetUnit, want: number, minimum = want): Promise<Spending | undefined> {
    const limit = this.options.limits[unit]
    if (limit === undefined) return undefined
    const key = await this.keyOf(params)
    if (key === undefined) return undefined
    const taken = await this.store.take(
      `${unit}:${key}`,
      Math.min(want, limit),
      Math.min(minimum, limit),
      limit,
      this.options.windowMs
    )
    const spending: Spending = { key, unit, limit, ...taken }
    if (taken.granted === 0 && minimum > 0) throw budgetRefusal(spending, minimum)
    return spending
  }

  /** Corrects a take by what the work really cost; answers what is left. */
  async settle(spending: Spending, cost: number): Promise<Spending> {
    const delta = cost - spending.granted
    if (delta !== 0) await this.store.settle(`${spending.unit}:${spending.key}`, delta)
    return { ...spending, granted: cost, spent: Math.max(0, spending.spent + delta) }
  }
}

/** The names the units have in messages. */
const UNIT_NAMES: Record<BudgetUnit, string> = {
  graphqlCost: 'GraphQL cost',
  rows: 'rows',
  exportRows: 'export rows',
  subscriptions: 'subscriptions'
}

/** The 429 of a call the budget cannot pay for: `data` says which budget, what is left and when to retry. */
export function budgetRefusal(spending: Spending, needed: number) {
  const retryAfter = retryAfterSeconds(spending.resetMs)
  return new TooManyRequests(
    `The budget of ${spending.limit} ${UNIT_NAMES[spending.unit]} per window is spent (this call needs ` +
      `${needed}); it starts again in ${retryAfter} s`,
    {
      budget: spending.unit,
      limit: spending.limit,
      remaining: Math.max(0, spending.limit - spending.spent),
      retryAfter
    }
  )
}

/**
 * The headers a budget's refusal is answered with over HTTP (`Retry-After`, `RateLimit-*`), from its `data`
 * (which survives the copies hooks and transports make of an error); undefined for any other error.
 */
export function refusalHeaders(error: unknown): Record<string, string> | undefined {
  const { code, data } = (error ?? {}) as { code?: unknown; data?: Record<string, unknown> }
  if (code !== 429 || typeof data?.retryAfter !== 'number' || typeof data.budget !== 'string')
    return undefined
  return {
    'RateLimit-Limit': String(data.limit),
    'RateLimit-Remaining': String(data.remaining),
    'RateLimit-Reset': String(data.retryAfter),
    'Retry-After': String(data.retryAfter)
  }
}

const budgetsByApp = new WeakMap<Application, Budgets>()

/** Sets the application's budgets (at start-up, from the `budgets` option). */
export function setBudgets(app: Application, options: ResolvedBudgets | undefined) {
  if (options) budgetsByApp.set(app, new Budgets(app, options))
  else budgetsByApp.delete(app)
}

/** The application's budgets; undefined without the `budgets` option. */
export function budgetsOf(app: Application): Budgets | undefined {
  return budgetsByApp.get(app)
}
