import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api'
import type { Context, Next } from '../common/koa'
import { instruments, metering, tracer, tracing } from './telemetry'

export interface RequestTelemetry {
  /** `rest` or `graphql`, the `feathers_query.surface` of the request count. */
  surface: string
  /** The route template (`/todo-items/:id`), known once the request went through. */
  route(ctx: Context): string | undefined
  /** The span's name when it is not `<method> <route>` (GraphQL names it by its operation). */
  spanName?: string
}

type Handler = (ctx: Context, next: Next) => Promise<unknown>

const passOn: Handler = (_ctx, next) => next()

/**
 * Koa middleware: `handle` (by default, the middleware after this one) inside a span per request of the
 * plugin's HTTP surfaces, active while the request is handled (the service calls' spans nest under it), named
 * and described as OpenTelemetry's HTTP conventions say, and the request counted. Neither without a
 * registered SDK, and then no closure or object is made either.
 */
export function requestTelemetry(options: RequestTelemetry, handle: Handler = passOn): Handler {
  // Not async itself: without an SDK a request pays for no promise of its own here.
  return (ctx: Context, next: Next) => {
    const traced = tracing()
    return traced || metering() ? observed(options, handle, traced, ctx, next) : handle(ctx, next)
  }
}

/** `handle` in the request's span (when `traced`), its duration and count recorded. */
async function observed(
  options: RequestTelemetry,
  handle: Handler,
  traced: boolean,
  ctx: Context,
  next: Next
) {
  const started = performance.now()
  const method = ctx.method
  const span = traced
    ? tracer.startSpan(options.spanName ?? method, {
        // Under an HTTP server span of the application's own instrumentation this one is not the server's.
        kind: trace.getActiveSpan() ? SpanKind.INTERNAL : SpanKind.SERVER,
        attributes: { 'http.request.method': method }
      })
    : undefined
  let failure: unknown
  try {
    await (span
      ? context.with(trace.setSpan(context.active(), span), handle, undefined, ctx, next)
      : handle(ctx, next))
  } catch (error) {
    failure = error
    throw error
  } finally {
    const status = failure === undefined ? ctx.status : statusOf(failure)
    const route = options.route(ctx)
    const attributes: Attributes = { 'http.request.method': method, 'http.response.status_code': status }
    if (route !== undefined) attributes['http.route'] = route
    const { requests, requestDuration } = instruments()
    requestDuration.record((performance.now() - started) / 1000, attributes)
    requests.add(1, { ...attributes, 'feathers_query.surface': options.surface })
    if (span)
      endRequestSpan(span, attributes, options.spanName ? undefined : `${method} ${route ?? ''}`.trim())
  }
}

function endRequestSpan(span: Span, attributes: Attributes, name: string | undefined) {
  span.setAttributes(attributes)
  if (name) span.updateName(name)
  const status = attributes['http.response.status_code'] as number
  // As the conventions say for a server: only its own failures (5xx) are errors, not the client's.
  if (status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR })
    span.setAttribute('error.type', String(status))
  }
  span.end()
}

/** The status a thrown error will be answered with: a Feathers error's code, 500 for anything else. */
function statusOf(error: unknown) {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'number' && code >= 400 && code < 600 ? code : 500
}
