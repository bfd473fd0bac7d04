import { FeathersError, GeneralError, convert } from '@feathersjs/errors'
import type { Context, Next } from './common/koa'
import { undecodableBody } from './rest/request-body'
import { feathersErrorExtensions, graphqlCodeOf, graphqlErrorBody } from './graphql/execution/error-codes'
import { PayloadTooLarge, UnsupportedMediaType } from './common/errors'
import { feathersQueryState } from './state'
import { logFailure, loggerOf, logRefusal } from './common/logger'
import { refusalHeaders } from './budgets/budgets'

/** Errors Koa middleware throws with an HTTP status (e.g. koa-body's "invalid JSON"), as Feathers errors. */
function fromHttpError(error: { status?: number; statusCode?: number; message?: string; expose?: boolean }) {
  const status = error.status ?? error.statusCode
  const message = error.expose === false ? 'Bad request' : (error.message ?? 'Bad request')
  if (status === 413) return new PayloadTooLarge('The request body is too large')
  if (status === 415) return new UnsupportedMediaType(message)
  if (status && status >= 400 && status < 500) {
    return convert({
      name: 'BadRequest',
      message: status === 400 ? `Malformed request: ${message}` : message,
      code: status
    })
  }
  return undefined
}

/** Failures before the GraphQL endpoint got the request (e.g. unparsable JSON) are still GraphQL errors there. */
function isGraphqlRequest(ctx: Context) {
  const state = feathersQueryState(ctx.app)
  return state?.graphqlPath !== undefined && ctx.path === state.graphqlPath
}

/**
 * What reaches this handler on the GraphQL path failed before GraphQL saw the request (a body that is not
 * JSON, a broken encoding, too large): not GraphQL over HTTP, so a 400 is `BAD_REQUEST`, as the endpoint's
 * own refusals are, rather than the `BAD_USER_INPUT` of an argument.
 */
function graphqlBody(error: FeathersError) {
  const code = error.code === 400 ? 'BAD_REQUEST' : graphqlCodeOf(error)
  return graphqlErrorBody(error.message, feathersErrorExtensions(error, code))
}

export type ErrorLogger = (error: unknown, ctx: Context) => void

/**
 * Every failure as Feathers error JSON (`{name, message, code, className, data?, errors?}`): Feathers errors as
 * they are, HTTP errors from Koa middleware mapped to their status, anything else a 500 whose details stay
 * in the log, not in the response: `log` when given, else the plugin's `logger` (console until one is set).
 * A client error with a `cause` (a database's refusal) is logged too, with its cause: to `log`, or the
 * logger's `warn`, since the client caused it.
 */
export function errorHandler(log?: ErrorLogger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next()
      if (ctx.body === undefined && ctx.status === 404) {
        throw convert({ name: 'NotFound', message: `Path ${ctx.path} not found`, code: 404 })
      }
    } catch (raw) {
      let error = raw instanceof FeathersError ? raw : fromHttpError(raw as object)
      error ??= undecodableBody(raw, ctx) ?? new GeneralError('Internal server error')
      const cause = (raw as { cause?: unknown })?.cause
      if (error.code >= 500) {
        if (log) log(cause ?? raw, ctx)
        else logFailure(loggerOf(ctx.app), cause ?? raw)
      } else if (cause !== undefined) {
        // A client's error with a cause (a driver's refusal): its stack tells the cause, without the values.
        if (log) log(raw, ctx)
        else logRefusal(loggerOf(ctx.app), raw as Error)
      }
      ctx.status = error.code
      // A budget's refusal says when to come back (Retry-After) and what is left (RateLimit-*).
      const headers = refusalHeaders(error)
      if (headers) ctx.set(headers)
      ctx.body = isGraphqlRequest(ctx) ? graphqlBody(error) : error.toJSON()
    }
  }
}
