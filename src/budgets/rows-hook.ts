import type { HookContext, NextFunction } from '@feathersjs/feathers'
import { answerBudgetHeaders, budgetsOf } from './budgets'
import { rateLimitHeaders } from './headers'

/**
 * Calls whose rows are paid for elsewhere: an export's pages (its own `exportRows` budget) set this in their
 * params.
 */
export const PAID_ELSEWHERE = Symbol.for('feathers-query.budgetPaidElsewhere')

/** The records a read answered: a page's, a list's, one record. */
function rowsOf(result: unknown): number {
  if (Array.isArray(result)) return result.length
  const data = (result as { data?: unknown } | null)?.data
  if (Array.isArray(data)) return data.length
  return result === undefined || result === null ? 0 : 1
}

/**
 * Makes a resource's reads by clients (REST and socket.io; GraphQL pays by its cost) spend the caller's
 * `rows` budget. Before the read, the most it can answer is taken (a page: `maxResultsSize`; an aggregate:
 * `maxGroups`; a record: 1), or what is left if less, and at least 1: so readers at once, on any instance,
 * never spend more than the budget plus what one read answers. After it, what was not answered is given back.
 * A failed read gives everything back.
 */
export function rowsBudgetHook(mostRows: (method: string) => number) {
  return async (context: HookContext, next: NextFunction) => {
    const budgets = budgetsOf(context.app as never)
    const { params } = context
    if (
      !budgets?.counts('rows') ||
      !params.provider ||
      params.provider === 'graphql' ||
      (params as Record<symbol, unknown>)[PAID_ELSEWHERE]
    ) {
      return next()
    }
    const spending = await budgets.take(params, 'rows', mostRows(context.method), 1)
    if (!spending) return next()
    try {
      await next()
    } catch (error) {
      await budgets.settle(spending, 0)
      throw error
    }
    const settled = await budgets.settle(spending, rowsOf(context.result))
    const headers = rateLimitHeaders(settled)
    context.http = { ...context.http, headers: { ...context.http?.headers, ...headers } }
    answerBudgetHeaders(params, headers)
  }
}
