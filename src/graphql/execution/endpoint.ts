import type { Application } from '@feathersjs/koa'
import { specifiedRules, type GraphQLError } from 'graphql'
import type { Response } from 'graphql-http'
import { createHandler, type RequestContext } from 'graphql-http/lib/use/koa'
import type { Context, Next } from '../../common/koa'
import type { PageSizes, ResolvedResource } from '../../resource/resolved'
import { createGraphqlContext, type GraphqlContext } from '../fields/context'
import {
  dedupeErrors,
  formatGraphqlError,
  graphqlErrorBody,
  knownOperationTypes,
  parseWithCode,
  validateWithCode,
  type GraphqlErrorLogger
} from './error-codes'
import { buildGraphqlSchema } from '../schema'
import {
  checkDocumentNesting,
  checkDocumentSize,
  operationLimits,
  resolveLimits,
  variablesNestingError,
  type GraphqlLimits
} from './limits'
import { documentCache } from './document-cache'
import { graphqlPageSizes } from '../fields/collection-args'
import { compiledExecution } from './compiled-execution'
import { batchHandler, resolveMaxBatchOperations } from './batch'
import type { GraphqlSchemaPart } from '../fields/schema-part'
import { serveGraphqlWebSocket } from '../subscription/websocket-server'
import { logFailure, loggerOf, logRefusal } from '../../common/logger'
import { conditionalRead, resolveCaching, type CachingOptions } from '../../feathers/conditional-read'
import { requestTelemetry } from '../../telemetry/request-telemetry'
import { countLimitRefusal, countRefusal } from '../../telemetry/telemetry'
import { describeOperation } from './operation-telemetry'
import { notRegistered, TrustedDocuments, type TrustedDocumentsOptions } from './trusted-documents'
import { persistedRequestParams } from './persisted-request'
import { budgetedExecution } from '../../budgets/graphql-operation'
import { BUDGET_HEADERS } from '../../budgets/budgets'

export interface GraphqlOptions {
  /** Where the endpoint answers GET and POST (default `/graphql`). */
  path?: string
  /** Contributions to the schema from other features. */
  parts?: GraphqlSchemaPart[]
  /** What one request may cost: size, depth and complexity of the document, statements, connections. */
  limits?: GraphqlLimits
  /** Subscriptions (GraphQL over WebSocket, graphql-ws) at the same path; `false` leaves them out. */
  subscriptions?: boolean
  /**
   * Most operations one POST may hold as a JSON array (a batch, default 10); `false` or 0 refuses arrays as
   * any other malformed request.
   */
  maxBatchOperations?: number | false
  /** The documents clients may run by id, and whether only they may run (docs/guide/trusted-documents.md). */
  trustedDocuments?: TrustedDocumentsOptions
}

/**
 * The GraphQL endpoint as Koa middleware: graphql-http (GraphQL over HTTP, GET and POST) on the generated
 * schema, with a context per request built from the Koa context. The schema rides along as `.schema`.
 */
export function graphqlMiddleware(
  app: Application,
  resources: ResolvedResource[],
  options: GraphqlOptions = {},
  cachingOptions?: CachingOptions
) {
  const path = options.path ?? '/graphql'
  // Unexpected errors, which clients see only as INTERNAL_SERVER_ERROR, go to the plugin's logger, and so do
  // the causes of the database's refusals of a client's request, below error level.
  const log: GraphqlErrorLogger = (error, refusal) =>
    refusal ? logRefusal(loggerOf(app), error as Error) : logFailure(loggerOf(app), error)
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
  const sizes = limitPageSizes(resources)
  const validationRules = [knownOperationTypes, operationLimits(limits, sizes)]
  // Registered documents are parsed, validated and costed here, once: an invalid one stops the start.
  const trusted = new TrustedDocuments(
    options.trustedDocuments,
    (source) => {
      try {
        const document = documents.parse(source)
        // The rules graphql-http validates with: the cached result is the one it will find.
        return {
          document,
          errors: documents.validate(schema, document, [...specifiedRules, ...validationRules])
        }
      } catch (error) {
        return { errors: [error as GraphQLError] }
      }
    },
    limits.documentCacheBytes
  )
  // Over HTTP and WebSocket alike: too large a document is refused before it is parsed, and where only
  // registered documents run, any other is (HTTP refuses it earlier, with a 400).
  const parse = (source: string) => {
    const registered = trusted.parsed(source)
    if (registered) return registered
    if (trusted.enforced) throw notRegistered()
    checkDocumentSize(source, limits.maxDocumentBytes)
    return documents.parse(source)
  }
  const formatError = formatGraphqlError(log)
  // Each operation, alone or in a batch, spends the caller's budget before it runs.
  const execute = budgetedExecution(app, compiledExecution(schema)) as ReturnType<typeof compiledExecution>
  const createContext = (ctx: Context) => createGraphqlContext(app, ctx, limits.maxConcurrentStatements)
  const websocket =
    options.subscriptions === false
      ? undefined
      : serveGraphqlWebSocket(app, {
          path,
          schema,
          parse,
          validate: documents.validate,
          rules: validationRules,
          formatError,
          checkVariables: variablesNestingError,
          limits
        })
  const handle = createHandler<GraphqlContext>({
    schema,
    parseRequestParams: persistedRequestParams(trusted, log),
    parse: (source) => parse(typeof source === 'string' ? source : source.body),
    validate: documents.validate,
    execute,
    validationRules,
    context: (request) => createContext(koaContext(request)),
    onOperation: (request, args, result) => {
      describeOperation(args.document, args.operationName)
      if (result.errors) return dedupeErrors(result)
      try {
        koaContext(request)[SERIALIZED] = JSON.stringify(result)
      } catch (error) {
        // A value JSON cannot hold, or a response past the longest string V8 makes (about 512 MB).
        log(error)
        return INTERNAL_ERROR
      }
      return SERIALIZED_ELSEWHERE
    },
    // graphql-http formats each error of a response once: each refusal by a limit is counted here.
    formatError: (error) => {
      const formatted = formatError(error)
      countLimitRefusal(formatted)
      return formatted
    }
  })
  // A GET's data may come from any resource: one that opts out of caching leaves every GraphQL GET untagged.
  const optedOut = resources.some((resource) => resource.definition.caching?.enabled === false)
  const caching = resolveCaching(cachingOptions, optedOut ? { enabled: false } : undefined)
  const maxBatchOperations = resolveMaxBatchOperations(options.maxBatchOperations)
  const batch =
    maxBatchOperations === undefined
      ? undefined
      : batchHandler({
          schema,
          parse,
          validate: documents.validate,
          // graphql-http adds its rules to graphql-js' own in the same way.
          rules: [...specifiedRules, ...validationRules],
          execute,
          formatError,
          context: createContext,
          limits,
          sizes,
          maxOperations: maxBatchOperations
        })
  const answer = async (ctx: Context, next: Next) => {
    // Whose budget the operation spends (an anonymous caller's address), and where it tells what is left; an
    // operation refused for its budget is a 429 with Retry-After.
    let refused = false
    ctx.feathers = Object.assign({}, ctx.feathers, {
      ip: ctx.ip,
      [BUDGET_HEADERS]: (headers: Record<string, string>) => {
        ctx.set(headers)
        if (headers['Retry-After']) refused = true
      }
    }) as typeof ctx.feathers
    await handle(ctx, next)
    if (refused) {
      // graphql-http answered the refusal as an execution's errors; its status is the budget's.
      ctx.status = 429
      delete (ctx as GraphqlKoaContext)[SERIALIZED]
    }
    const body = (ctx as GraphqlKoaContext)[SERIALIZED]
    if (body !== undefined) ctx.body = body
    if (ctx.status >= 400 && (ctx.body === null || ctx.body === undefined || ctx.body === ''))
      describeRefusal(ctx)
    else if (ctx.status >= 400) codeRefusal(ctx)
  }
  // Only a GET that answered data without errors is tagged: graphql-http refuses mutations over GET.
  const conditionalAnswer = (ctx: Context, next: Next) =>
    conditionalRead(
      ctx,
      caching,
      () => answer(ctx, next),
      () => (ctx as GraphqlKoaContext)[SERIALIZED] !== undefined
    )
  const routed = (ctx: Context, next: Next) => {
    // graphql-http refuses HEAD (405): a 304 to a HEAD with a GET's tag would confirm what it never answers.
    if (ctx.method === 'HEAD') return answer(ctx, next)
    // A batch is a POST only: GET requests carry one operation.
    const body: unknown = (ctx.request as { body?: unknown }).body
    if (batch && ctx.method === 'POST' && Array.isArray(body)) return batch(ctx, body)
    return conditionalAnswer(ctx, next)
  }
  const observed = requestTelemetry({ surface: 'graphql', route: () => path, spanName: 'graphql' }, routed)
  const middleware = async (ctx: Context, next: Next) => {
    if (ctx.path !== path) return next()
    await observed(ctx, next)
  }
  return Object.assign(middleware, { schema, path, websocket })
}

/**
 * Where a result without errors waits, serialized, for the middleware. graphql-http serializes every
 * response through a JSON replacer function, which makes V8 take its slow path: on a page of nested
 * connections that costs more than executing it. Such a result holds no Error for the replacer to rewrite,
 * so it is serialized plainly and put in place of the placeholder graphql-http answered with.
 */
const SERIALIZED = Symbol('feathers-query.graphqlBody')

type GraphqlKoaContext = Context & { [SERIALIZED]?: string }

/**
 * The Koa context of a graphql-http request, from the context graphql-http's Koa adapter gives it (the Koa
 * response). Not from a WeakMap of requests to contexts: a context refers to its request, and V8's young
 * collections keep such an entry, and with it everything the request made, until a full collection
 * (docs/design-notes.md, "The Koa context of a GraphQL request").
 */
function koaContext(request: { context: RequestContext }) {
  return request.context.res.ctx as GraphqlKoaContext
}

const SERIALIZED_ELSEWHERE = { data: null }

const INTERNAL_ERROR: Response = [
  JSON.stringify(graphqlErrorBody('Internal server error', { code: 'INTERNAL_SERVER_ERROR' })),
  {
    status: 500,
    statusText: 'Internal Server Error',
    headers: { 'content-type': 'application/json; charset=utf-8' }
  }
]

/** The code and message of each refusal graphql-http answers with an empty body, by status. */
const GRAPHQL_HTTP_REFUSALS: Record<number, [string, string]> = {
  405: ['METHOD_NOT_ALLOWED', 'GraphQL takes GET and POST requests'],
  406: ['NOT_ACCEPTABLE', 'Accept application/json or application/graphql-response+json'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'POST GraphQL requests as Content-Type: application/json']
}

/** The code and message of a refusal with this status. */
function refusal(ctx: Context): [string, string] {
  return (
    GRAPHQL_HTTP_REFUSALS[ctx.status] ??
    (ctx.status >= 500
      ? ['INTERNAL_SERVER_ERROR', 'Internal server error']
      : ['BAD_REQUEST', ctx.message || 'Malformed GraphQL request'])
  )
}

/**
 * graphql-http refuses a wrong method (405) or media type (415), or an unparsable request (400), with an
 * empty body; clients get a GraphQL error with a code instead, like every other failure. It answers an
 * exception of its own hooks with an empty 500, which is our failure, not the client's.
 */
function describeRefusal(ctx: Context) {
  const [code, message] = refusal(ctx)
  if (GRAPHQL_HTTP_REFUSALS[ctx.status]) countRefusal(code)
  answerKeepingStatus(ctx, graphqlErrorBody(message, { code }))
}

/** Sets the body and keeps the refusal's status, which Koa makes 200 with a body unless set explicitly. */
function answerKeepingStatus(ctx: Context, body: unknown) {
  const status = ctx.status
  ctx.body = body
  ctx.status = status
}

/**
 * Some refusals graphql-http words itself ("Cannot perform mutations over GET", a 405), without a code: they
 * get the code of their status, as the plugin's own errors carry one.
 */
function codeRefusal(ctx: Context) {
  let body: unknown = ctx.body
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body)
    } catch {
      return
    }
  }
  const errors = (body as { errors?: Array<{ extensions?: Record<string, unknown> }> } | null)?.errors
  if (!Array.isArray(errors) || errors.every((error) => error?.extensions?.code)) return
  const [code] = refusal(ctx)
  for (const error of errors) if (!error.extensions?.code) error.extensions = { ...error.extensions, code }
  answerKeepingStatus(ctx, body)
}

/**
 * The page sizes the operation limits assume of any connection: the largest default page (one without
 * `first`/`last`) of any resource, and the largest page any resource allows.
 */
function limitPageSizes(resources: ResolvedResource[]): PageSizes {
  const sizes = resources.map(graphqlPageSizes)
  return {
    default: Math.max(...sizes.map((size) => size.default)),
    max: Math.max(...sizes.map((size) => size.max))
  }
}
