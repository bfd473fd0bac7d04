import { GraphQLError, getOperationAST, type DocumentNode, type ExecutionArgs } from 'graphql'
import { FeathersError } from '@feathersjs/errors'
import type { Application } from '@feathersjs/feathers'
import { answerBudgetHeaders, budgetsOf, refusalHeaders } from './budgets'
import { rateLimitHeaders } from './headers'
import type { ResourceParams } from '../model/records'
import { measuredOperation } from '../graphql/execution/limits'

/**
 * The operation a request runs and its cost, as the validation rule `operationLimits` measured it (0 for an
 * operation validation did not measure). Documents are validated once and kept (the document cache), so the
 * cost of a document run again is read rather than walked again.
 */
export function operationOf(document: DocumentNode, operationName?: string | null) {
  const operation = getOperationAST(document, operationName)
  return { operation, cost: (operation && measuredOperation(operation)?.cost) ?? 0 }
}

/** A budget's refusal as a GraphQL error: `RATE_LIMITED`, with when to retry. */
export function rateLimited(error: FeathersError) {
  const { limit, remaining, retryAfter, budget } = (error.data ?? {}) as Record<string, unknown>
  return new GraphQLError(error.message, {
    extensions: { code: 'RATE_LIMITED', budget, limit, remaining, retryAfter }
  })
}

/**
 * Spends the caller's budget on an operation before it runs: a subscription spends one of `subscriptions`,
 * a query or mutation its cost (as `maxComplexity` counts it) of `graphqlCost`. Answers the refusal as GraphQL
 * errors, or undefined to go on.
 */
export async function spendOnOperation(
  app: Application,
  params: ResourceParams,
  document: DocumentNode,
  operationName?: string | null
): Promise<GraphQLError[] | undefined> {
  const budgets = budgetsOf(app)
  if (!budgets) return undefined
  const { operation, cost } = operationOf(document, operationName)
  if (!operation) return undefined
  try {
    const spending =
      operation.operation === 'subscription'
        ? await budgets.take(params, 'subscriptions', 1)
        : await budgets.take(params, 'graphqlCost', cost)
    if (spending) answerBudgetHeaders(params, rateLimitHeaders(spending))
    return undefined
  } catch (error) {
    if (!(error instanceof FeathersError) || error.code !== 429) throw error
    answerBudgetHeaders(params, refusalHeaders(error) ?? {})
    return [rateLimited(error)]
  }
}

type Execute = (args: ExecutionArgs) => unknown

/** `execute` that spends the caller's budget first (GraphQL over HTTP). */
export function budgetedExecution(app: Application, execute: Execute) {
  return async (args: ExecutionArgs) => {
    const params = (args.contextValue as { params(): ResourceParams }).params()
    const refused = await spendOnOperation(app, params, args.document, args.operationName)
    return refused ? { errors: refused } : execute(args)
  }
}
