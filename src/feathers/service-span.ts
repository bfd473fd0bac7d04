import type { HookContext, NextFunction } from '@feathersjs/feathers'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { tracer, tracing } from '../telemetry/telemetry'

/**
 * Around hook: a span per call of a resource's service method (`todo-items.find`), active while the method
 * and its hooks run, so that the statements it runs nest under it, and it under the request's span. None
 * without a registered SDK.
 */
export function serviceSpan(hookContext: HookContext, next: NextFunction) {
  // Not async itself: without an SDK a call pays for no promise of its own here.
  return tracing() ? spanned(hookContext, next) : next()
}

async function spanned(hookContext: HookContext, next: NextFunction) {
  const { path, method } = hookContext
  const span = tracer.startSpan(`${path}.${method}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      'feathers.service.path': path,
      'feathers.service.method': method,
      'feathers.provider': hookContext.params?.provider ?? 'server'
    }
  })
  try {
    await context.with(trace.setSpan(context.active(), span), next)
  } catch (error) {
    const code = (error as { code?: unknown })?.code
    const status = typeof code === 'number' ? code : 500
    span.setAttribute(
      'error.type',
      typeof code === 'number' ? String(code) : ((error as Error)?.name ?? 'Error')
    )
    // A refusal of the caller's request (4xx) is the call's answer, not the server's failure.
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
    throw error
  } finally {
    span.end()
  }
}
