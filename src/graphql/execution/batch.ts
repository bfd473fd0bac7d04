import {
  GraphQLError,
  TypeInfo,
  ValidationContext,
  getOperationAST,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule
} from 'graphql'
import type { Context } from '../../common/koa'
import { ConfigurationError } from '../../common/errors'
import { DEFAULTS } from '../../resource/defaults'
import type { PageSizes } from '../../resource/resolved'
import type { GraphqlContext } from '../fields/context'
import { dedupeErrors, graphqlErrorBody } from './error-codes'
import type { GraphqlLimits } from './limits'
import { OperationCost } from './operation-cost'

/**
 * The most operations of one batch: `graphql.maxBatchOperations` or the default; undefined when batching is
 * off. Anything but `false` or a non-negative integer stops start-up.
 */
export function resolveMaxBatchOperations(configured: unknown = DEFAULTS.graphqlMaxBatchOperations) {
  if (configured === false || configured === 0) return undefined
  if (typeof configured !== 'number' || !Number.isSafeInteger(configured) || configured < 0) {
    throw new ConfigurationError('graphql.maxBatchOperations must be false or a non-negative integer')
  }
  return configured
}

/** What the batch endpoint shares with the single-operation one. */
export interface BatchExecution {
  schema: GraphQLSchema
  parse: (source: string) => DocumentNode
  validate: (
    schema: GraphQLSchema,
    document: DocumentNode,
    rules: readonly ValidationRule[]
  ) => GraphQLError[]
  rules: readonly ValidationRule[]
  execute: (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult>
  formatError: (error: GraphQLError | Error) => GraphQLError
  context: (ctx: Context) => GraphqlContext
  limits: Required<GraphqlLimits>
  sizes: PageSizes
  maxOperations: number
}

/** An entry ready to run, or what it answers without running. */
type Prepared =
  | { answer: ExecutionResult }
  | { document: DocumentNode; operation: OperationDefinitionNode; args: Omit<ExecutionArgs, 'contextValue'> }

/** A refusal of the whole batch: a 400 with one error, before any entry runs. */
class BatchRefusal extends Error {
  constructor(
    message: string,
    readonly extensions: { code: string } & Record<string, unknown>
  ) {
    super(message)
  }
}

/**
 * Answers a POST whose body is an array of operations (Apollo's and urql's batching links) with an array of
 * their results, in order. Each entry is its own operation with its own errors; the limits of one operation
 * hold for the batch as a whole (their sum), so that batching is no way around them. Queries next to each
 * other run together; a mutation runs alone, after everything before it, and what was loaded before it is
 * forgotten. One context serves the batch: its relation loaders read a record asked for by several entries
 * once, and its concurrency limit holds for all of them.
 */
export function batchHandler(batch: BatchExecution) {
  return async (ctx: Context, entries: unknown[]) => {
    let prepared: Prepared[]
    try {
      prepared = prepareBatch(batch, entries)
    } catch (error) {
      if (!(error instanceof BatchRefusal)) throw error
      ctx.status = 400
      ctx.body = graphqlErrorBody(error.message, error.extensions)
      return
    }
    const context = batch.context(ctx)
    const results: ExecutionResult[] = new Array(prepared.length)
    let running: Array<Promise<void>> = []
    for (const [index, entry] of prepared.entries()) {
      if ('answer' in entry) {
        results[index] = entry.answer
        continue
      }
      const run = async () => {
        results[index] = await executeEntry(batch, entry.args, context)
      }
      if (entry.operation.operation === 'query') {
        running.push(run())
        continue
      }
      await Promise.all(running)
      running = []
      await run()
      // Records loaded before the write may have changed: later entries read them again.
      context.forgetLoads()
    }
    await Promise.all(running)
    ctx.status = 200
    ctx.type = 'application/json'
    ctx.body = JSON.stringify(results)
  }
}

async function executeEntry(
  batch: BatchExecution,
  args: Omit<ExecutionArgs, 'contextValue'>,
  context: GraphqlContext
): Promise<ExecutionResult> {
  // graphql-js answers every failure of an operation as its errors; a throw is a defect, the Koa error handler's.
  const result = await batch.execute({ ...args, contextValue: context })
  if (!result.errors) return result
  return dedupeErrors({ ...result, errors: result.errors.map((error) => batch.formatError(error)) })
}

/**
 * Parses, validates and measures every entry before any runs. An entry that is not a valid operation answers
 * its own errors; a batch that is empty, too long, holds a subscription or costs more in all than one
 * operation may is refused whole.
 */
function prepareBatch(batch: BatchExecution, entries: unknown[]): Prepared[] {
  const { limits, maxOperations } = batch
  if (entries.length === 0) throw new BatchRefusal('The batch holds no operation.', { code: 'BAD_REQUEST' })
  if (entries.length > maxOperations) {
    throw new BatchRefusal(
      `The batch holds ${entries.length} operations; at most ${maxOperations} are allowed ` +
        '(graphql.maxBatchOperations).',
      { code: 'BATCH_TOO_LARGE', operations: entries.length, maxBatchOperations: maxOperations }
    )
  }
  const bytes = entries.reduce<number>((sum, entry) => sum + Buffer.byteLength(queryOf(entry) ?? ''), 0)
  if (bytes > limits.maxDocumentBytes) {
    throw new BatchRefusal(`The batch's documents are larger than ${limits.maxDocumentBytes} bytes in all.`, {
      code: 'QUERY_TOO_LARGE',
      maxBytes: limits.maxDocumentBytes
    })
  }
  const prepared = entries.map((entry) => prepareEntry(batch, entry))
  const total = { cost: 0, statements: 0 }
  for (const entry of prepared) {
    if ('answer' in entry) continue
    if (entry.operation.operation === 'subscription') {
      throw new BatchRefusal('Subscriptions cannot be batched: subscribe over WebSocket.', {
        code: 'BAD_REQUEST'
      })
    }
    const measured = measure(batch, entry.document, entry.operation)
    total.cost += measured.cost
    total.statements += measured.statements
  }
  if (total.cost > limits.maxComplexity) {
    throw new BatchRefusal(
      `The batch could cost ${total.cost} or more in all; at most ${limits.maxComplexity} is allowed for ` +
        'all its operations together.',
      { code: 'QUERY_TOO_COMPLEX', cost: total.cost, maxComplexity: limits.maxComplexity }
    )
  }
  if (total.statements > limits.maxStatements) {
    throw new BatchRefusal(
      `The batch could run ${total.statements} or more SQL statements in all; at most ` +
        `${limits.maxStatements} are allowed for all its operations together.`,
      { code: 'QUERY_TOO_COMPLEX', statements: total.statements, maxStatements: limits.maxStatements }
    )
  }
  return prepared
}

function queryOf(entry: unknown): string | undefined {
  const query = (entry as { query?: unknown } | null)?.query
  return typeof query === 'string' ? query : undefined
}

/** One entry parsed and validated as graphql-http would a single request's parameters. */
function prepareEntry(batch: BatchExecution, entry: unknown): Prepared {
  const refuse = (message: string): Prepared => ({
    answer: { errors: [new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } })] }
  })
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    return refuse('Each operation of a batch is an object with a query.')
  }
  const { query, variables, operationName } = entry as Record<string, unknown>
  if (typeof query !== 'string') return refuse('Missing query')
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) {
    return refuse('Invalid variables: an object is expected.')
  }
  if (operationName != null && typeof operationName !== 'string') {
    return refuse('Invalid operationName: a string is expected.')
  }
  let document: DocumentNode
  try {
    document = batch.parse(query)
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    return { answer: { errors: [batch.formatError(error)] } }
  }
  const errors = batch.validate(batch.schema, document, batch.rules)
  if (errors.length) return { answer: { errors: errors.map((error) => batch.formatError(error)) } }
  const operation = getOperationAST(document, operationName as string | undefined)
  if (!operation) {
    return {
      answer: {
        errors: [
          new GraphQLError(
            operationName
              ? `Unknown operation named "${operationName}".`
              : 'Which operation to run is unclear.',
            { extensions: { code: 'BAD_REQUEST' } }
          )
        ]
      }
    }
  }
  const args = {
    schema: batch.schema,
    document,
    operationName: operationName as string | undefined,
    variableValues: variables as Record<string, unknown> | undefined
  }
  return { document, operation, args }
}

/** The cost and statements of one operation, as the operation limits measure them. */
function measure(batch: BatchExecution, document: DocumentNode, operation: OperationDefinitionNode) {
  const context = new ValidationContext(batch.schema, document, new TypeInfo(batch.schema), () => {})
  const measured = new OperationCost(context, batch.sizes, batch.limits)
  measured.walkOperation(operation)
  return measured
}
