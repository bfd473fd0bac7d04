import { FeathersError } from '@feathersjs/errors'
import { GraphQLError, parse, validate, type ExecutionResult, type ValidationRule } from 'graphql'
import { copyWith } from '../../common/copy-with'

/**
 * Where a GraphQL error goes in the log: `refusal` for a client's error the database refused, which is
 * the client's doing and belongs below error level (see `logRefusal`).
 */
export type GraphqlErrorLogger = (error: unknown, refusal?: boolean) => void

/** `extensions.code` of Feathers errors, by HTTP status, in the names GraphQL clients know from Apollo. */
const CODES: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  503: 'SERVICE_UNAVAILABLE'
}

/** The `extensions.code` a Feathers error has in a GraphQL response. */
export function graphqlCodeOf(error: FeathersError) {
  if (CODES[error.code]) return CODES[error.code]
  return error.code >= 500 ? 'INTERNAL_SERVER_ERROR' : error.className.replace(/-/g, '_').toUpperCase()
}

/**
 * The extensions of a Feathers error in a GraphQL response: its code (by default as `graphqlCodeOf` has it),
 * and its `errors`, naming the offending fields, when it lists them.
 */
export function feathersErrorExtensions(error: FeathersError, code = graphqlCodeOf(error)) {
  const { errors } = error as { errors?: unknown }
  return Array.isArray(errors) ? { code, errors } : { code }
}

/**
 * A GraphQL response body of one error, for failures that never reach execution (a refused request, a
 * body that is not JSON, a response that cannot be serialized).
 */
export function graphqlErrorBody(message: string, extensions: { code: string }) {
  return { errors: [{ message, extensions }] }
}

/**
 * The error with another message and more extensions. Execution errors come from graphql-jit, which records
 * `locations` itself rather than the nodes they are computed from, so those are carried over as they are.
 */
function withExtensions(error: GraphQLError, message: string, extensions: Record<string, unknown>) {
  const result = new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, ...extensions }
  })
  if (!result.locations && error.locations) {
    Object.defineProperty(result, 'locations', { value: error.locations, enumerable: true })
  }
  return result
}

/** A client error keeps its message (and `errors`, naming the offending fields); a server error is hidden. */
function fromFeathersError(error: GraphQLError, feathersError: FeathersError, log: GraphqlErrorLogger) {
  const { cause } = feathersError as { cause?: unknown }
  if (feathersError.code >= 400 && feathersError.code < 500) {
    // A database's refusal: its cause (the driver's message) goes to the log, never to the client.
    if (cause !== undefined) log(feathersError, true)
    return withExtensions(error, feathersError.message, feathersErrorExtensions(feathersError))
  }
  if (feathersError.code === 503) {
    if (cause !== undefined) log(feathersError)
    return withExtensions(error, feathersError.message, { code: CODES[503] })
  }
  log(cause ?? feathersError)
  return withExtensions(error, 'Internal server error', { code: 'INTERNAL_SERVER_ERROR' })
}

/**
 * Gives every error of a response an `extensions.code`: Feathers errors from the services by their status,
 * request errors (e.g. a variable of the wrong type, detected before anything runs) BAD_USER_INPUT, anything
 * unexpected INTERNAL_SERVER_ERROR without its details, which go to the log.
 */
export function formatGraphqlError(log: GraphqlErrorLogger) {
  return (error: GraphQLError | Error): GraphQLError => {
    if (!(error instanceof GraphQLError)) {
      // graphql-http's own refusals of a malformed request (missing query, unparsable variables).
      return new GraphQLError(error.message, { extensions: { code: 'BAD_REQUEST' } })
    }
    if (error.extensions?.code) return error
    const original = error.originalError
    if (original instanceof FeathersError) return fromFeathersError(error, original, log)
    if (!error.path) return withExtensions(error, error.message, { code: 'BAD_USER_INPUT' })
    if (original && !(original instanceof GraphQLError)) {
      log(original)
      return withExtensions(error, 'Internal server error', { code: 'INTERNAL_SERVER_ERROR' })
    }
    // graphql-js refusing an argument only at execution: a null variable in a non-null place inside a list or
    // object literal (`sorting: [$sort]`), which validation lets through when the variable has a default.
    if (original instanceof GraphQLError)
      return withExtensions(error, error.message, { code: 'BAD_USER_INPUT' })
    // A null for a non-null field: a server defect, logged and hidden like graphql-js' own (which carries a
    // plain Error as its original; graphql-jit's carries none).
    log(error)
    return withExtensions(error, 'Internal server error', { code: 'INTERNAL_SERVER_ERROR' })
  }
}

export const parseWithCode: typeof parse = (source, options) => {
  try {
    return parse(source, options)
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    throw withExtensions(error, error.message, { code: 'GRAPHQL_PARSE_FAILED' })
  }
}

export const validateWithCode: typeof validate = (...args) =>
  validate(...args).map((error) =>
    error.extensions.code
      ? error
      : withExtensions(error, error.message, { code: 'GRAPHQL_VALIDATION_FAILED' })
  )

/**
 * Refuses operations the schema has no root type for (mutations or subscriptions when every resource disables
 * its writes) at validation, as a
 * GRAPHQL_VALIDATION_FAILED, instead of graphql-js 16's execution error. (graphql-js 17 has this rule.)
 */
export const knownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (!context.getSchema().getRootType(node.operation)) {
      context.reportError(
        new GraphQLError(`This API has no ${node.operation} operations.`, {
          nodes: node
        })
      )
    }
  }
})

/**
 * One failed batch load rejects every parent's field with the same error; report it once, at its first path.
 */
export function dedupeErrors(result: ExecutionResult): ExecutionResult {
  if (!result.errors || result.errors.length < 2) return result
  const seen = new Set<Error>()
  const errors = result.errors.filter((error) => {
    if (!error.originalError) return true
    if (seen.has(error.originalError)) return false
    seen.add(error.originalError)
    return true
  })
  return copyWith(result, { errors })
}
