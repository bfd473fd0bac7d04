import type { Application } from '@feathersjs/koa'
import type { Response } from 'graphql-http'
import { createHandler } from 'graphql-http/lib/use/koa'
import type { IncomingMessage } from 'node:http'
import type { Context, Next } from '../koa'
import type { ResolvedResource } from '../resource/resolve'
import { createGraphqlContext, type GraphqlContext } from './context'
import {
  dedupeErrors,
  formatGraphqlError,
  knownOperationTypes,
  parseWithCode,
  validateWithCode,
  type GraphqlErrorLogger
} from './errors'
import { buildGraphqlSchema } from './schema'
import { checkDocumentNesting, checkDocumentSize, operationLimits, resolveLimits, type GraphqlLimits } from './limits'
import { documentCache } from './document-cache'
import { graphqlPageSizes } from './collection-args'
import { compiledExecution } from './compiled-execution'
import type { GraphqlSchemaPart } from './types'
import { serveGraphqlWebSocket } from './subscriptions/websocket-server'

export interface GraphqlOptions {
  /** Where the endpoint answers GET and POST (default `/graphql`). */
  path?: string
  /** Contributions to the schema from other features. */
  parts?: GraphqlSchemaPart[]
  /** Receives unexpected errors, which clients see only as INTERNAL_SERVER_ERROR (default console.error). */
  logError?: GraphqlErrorLogger
  /** What one request may cost: size, depth and complexity of the document, statements, connections. */
  limits?: GraphqlLimits
  /** Subscriptions (GraphQL over WebSocket, graphql-ws) at the same path; `false` leaves them out. */
  subscriptions?: boolean
}

/**
 * The GraphQL endpoint as Koa middleware: graphql-http (GraphQL over HTTP, GET and POST) on the generated
 * schema, with a context per request built from the Koa context. The schema rides along as `.schema`.
 */
export function graphqlMiddleware(
  app: Application,
  resources: ResolvedResource[],
  options: GraphqlOptions = {}
) {
  const path = options.path ?? '/graphql'
  const log = options.logError ?? ((error: unknown) => console.error(error))
  const schema = buildGraphqlSchema(resources, options.parts)
  const limits = resolveLimits(options.limits)
  const documents = documentCache(
    (source) => {
      checkDocumentNesting(source, limits.maxTokens)
      return parseWithCode(source, { maxTokens: limits.maxTokens })
    },
    validateWithCode,
    limits.documentCacheBytes
  )
  // graphql-http hands the context factory its own request object; the Koa context is found through it.
  const koaContexts = new WeakMap<IncomingMessage, Context>()
  /**
   * graphql-http serializes every response through a JSON replacer function, which makes V8 take its slow
   * path: on a page of nested connections that costs more than executing it. A result without errors holds
   * no Error for the replacer to rewrite, so it is serialized here, plainly, and put in place of the
   * placeholder graphql-http answered with.
   */
  const serialized = new WeakMap<IncomingMessage, string>()
  const validationRules = [knownOperationTypes, operationLimits(limits, limitPageSizes(resources))]
  const formatError = formatGraphqlError(log)
  const websocket =
    options.subscriptions === false
      ? undefined
      : serveGraphqlWebSocket(app, {
          path,
          schema,
          parse: (source) => documents.parse(source),
          validate: documents.validate,
          rules: validationRules,
          formatError,
          limits
        })
  const handle = createHandler<GraphqlContext>({
    schema,
    parse: (source) => {
      const text = typeof source === 'string' ? source : source.body
      checkDocumentSize(text, limits.maxDocumentBytes)
      return documents.parse(text)
    },
    validate: documents.validate,
    execute: compiledExecution(schema),
    validationRules,
    context: (request) =>
      createGraphqlContext(app, koaContexts.get(request.raw)!, limits.maxConcurrentStatements),
    onOperation: (request, _args, result) => {
      if (result.errors) return dedupeErrors(result)
      try {
        serialized.set(request.raw, JSON.stringify(result))
      } catch (error) {
        // A value JSON cannot hold, or a response past the longest string V8 makes (about 512 MB).
        log(error)
        return INTERNAL_ERROR
      }
      return SERIALIZED_ELSEWHERE
    },
    formatError
  })
  const middleware = async (ctx: Context, next: Next) => {
    if (ctx.path !== path) return next()
    koaContexts.set(ctx.req, ctx)
    await handle(ctx, next)
    const body = serialized.get(ctx.req)
    if (body !== undefined) ctx.body = body
    if (ctx.status >= 400 && (ctx.body === null || ctx.body === undefined || ctx.body === '')) describeRefusal(ctx)
  }
  return Object.assign(middleware, { schema, path, websocket })
}

const SERIALIZED_ELSEWHERE = { data: null }

const INTERNAL_ERROR: Response = [
  JSON.stringify({
    errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }]
  }),
  {
    status: 500,
    statusText: 'Internal Server Error',
    headers: { 'content-type': 'application/json; charset=utf-8' }
  }
]

/**
 * graphql-http refuses a wrong method (405) or media type (415), or an unparsable request (400), with an
 * empty body; clients get a GraphQL error with a code instead, like every other failure. It answers an
 * exception of its own hooks with an empty 500, which is our failure, not the client's.
 */
function describeRefusal(ctx: Context) {
  const reasons: Record<number, [string, string]> = {
    405: ['METHOD_NOT_ALLOWED', 'GraphQL takes GET and POST requests'],
    406: ['NOT_ACCEPTABLE', 'Accept application/json or application/graphql-response+json'],
    415: ['UNSUPPORTED_MEDIA_TYPE', 'POST GraphQL requests as Content-Type: application/json']
  }
  const [code, message] =
    reasons[ctx.status] ??
    (ctx.status >= 500
      ? ['INTERNAL_SERVER_ERROR', 'Internal server error']
      : ['BAD_REQUEST', ctx.message || 'Malformed GraphQL request'])
  const status = ctx.status
  ctx.body = { errors: [{ message, extensions: { code } }] }
  ctx.status = status
}

/** The page size a connection without `first`/`last` gets, and the largest any resource allows. */
function limitPageSizes(resources: ResolvedResource[]) {
  const sizes = resources.map(graphqlPageSizes)
  return {
    defaultSize: Math.max(...sizes.map((size) => size.default)),
    largest: Math.max(...sizes.map((size) => size.max))
  }
}
