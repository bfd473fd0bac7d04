import {
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  trace,
  type Counter,
  type Histogram,
  type MeterProvider,
  type UpDownCounter
} from '@opentelemetry/api'

/**
 * The plugin's OpenTelemetry instruments, through `@opentelemetry/api` alone: the application registers an
 * SDK (or not). Without one the API's tracer and meter do nothing, yet each span would still be an object
 * and each `context.with` a closure, so the hot paths ask `tracing()` first.
 */
const SCOPE = 'feathers-query'

export const tracer = trace.getTracer(SCOPE)

/** What `trace.getTracerProvider()` delegates to while no SDK is registered. */
const NO_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate()

/** Whether an SDK's tracer provider is registered: one property read, no allocation. */
export function tracing() {
  const provider = trace.getTracerProvider()
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_TRACER_PROVIDER
}

export interface Instruments {
  /** Requests answered by the REST routes and the GraphQL endpoint. */
  requests: Counter
  /** How long the plugin's HTTP surfaces took to answer (OpenTelemetry's `http.server.request.duration`). */
  requestDuration: Histogram
  /** Requests refused by one of the plugin's limits, by the limit's name. */
  refusals: Counter
  /** Service events the plugin emitted to the application's channels and subscriptions. */
  eventsPublished: Counter
  /** GraphQL subscriptions open now. */
  subscriptionsOpen: UpDownCounter
  /** How long statements waited for a pooled connection (OpenTelemetry's `db.client.connection.wait_time`). */
  poolWaits: Histogram
}

/**
 * The meter API has no proxy: a meter taken before the application registers its provider stays a no-op.
 * The instruments are made again when the global provider changes (tests register one per file).
 */
let made: { provider: MeterProvider; instruments: Instruments; metering: boolean } | undefined

const NO_METER = createNoopMeter().constructor

export function instruments(): Instruments {
  return current().instruments
}

/** Whether an SDK's meter provider is registered, for measurements that cost something to take. */
export function metering() {
  return current().metering
}

function current() {
  const provider = metrics.getMeterProvider()
  if (made?.provider === provider) return made
  const meter = provider.getMeter(SCOPE)
  const instruments: Instruments = {
    requests: meter.createCounter('feathers_query.requests', {
      description: 'Requests answered by the REST routes and the GraphQL endpoint',
      unit: '{request}'
    }),
    requestDuration: meter.createHistogram('http.server.request.duration', {
      description: 'Duration of HTTP server requests',
      unit: 's'
    }),
    refusals: meter.createCounter('feathers_query.refusals', {
      description: 'Requests and operations refused by a limit, by the limit',
      unit: '{refusal}'
    }),
    eventsPublished: meter.createCounter('feathers_query.events.published', {
      description: 'Service events published to channels and GraphQL subscriptions',
      unit: '{event}'
    }),
    subscriptionsOpen: meter.createUpDownCounter('feathers_query.subscriptions.open', {
      description: 'GraphQL subscriptions open',
      unit: '{subscription}'
    }),
    poolWaits: meter.createHistogram('db.client.connection.wait_time', {
      description: 'The time it took to obtain an open connection from the pool',
      unit: 's'
    })
  }
  made = { provider, instruments, metering: meter.constructor !== NO_METER }
  return made
}

/** Counts one refusal by `limit`, the limit's name as the options name it (`maxComplexity`) or its code. */
export function countRefusal(limit: string) {
  instruments().refusals.add(1, { 'feathers_query.limit': limit })
}

/**
 * The limits a GraphQL refusal names in its extensions (`maxComplexity: 10000`), by the name of the limit's
 * option.
 */
const LIMIT_EXTENSIONS: Record<string, string> = {
  maxBytes: 'maxDocumentBytes',
  maxNesting: 'maxNesting',
  maxDepth: 'maxDepth',
  maxComplexity: 'maxComplexity',
  maxStatements: 'maxStatements'
}

/** Counts the refusal of a GraphQL error whose extensions name one of the GraphQL limits. */
export function countLimitRefusal(error: { extensions?: Readonly<Record<string, unknown>> }) {
  for (const name in error.extensions) {
    if (Object.hasOwn(LIMIT_EXTENSIONS, name)) return countRefusal(LIMIT_EXTENSIONS[name])
  }
}
