import assert from 'node:assert/strict'
import { context, metrics, SpanKind, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan
} from '@opentelemetry/sdk-trace-base'
import { forEachDatabase } from './support/server'
import { clearTables, seedSubTasks, seedTodoItems } from './support/seed'
import { graphql } from './support/graphql'
import { graphqlWsClient } from './support/graphql-ws'
import { pollUntil } from './support/eventually'

/** A metric reader the test collects from when it wants. */
class CollectingReader extends MetricReader {
  protected async onShutdown() {}
  protected async onForceFlush() {}
}

/** A value the statements bind, which no span attribute may hold. */
const NEEDLE = 'needle-5e1c'

const exporter = new InMemorySpanExporter()
const reader = new CollectingReader()

/** The sum of a counter's (or a histogram's count of) points whose attributes include `match`. */
async function metricTotal(name: string, match: Record<string, unknown> = {}) {
  const { resourceMetrics } = await reader.collect()
  let total = 0
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue
      for (const point of metric.dataPoints as Array<DataPoint<number | Histogram>>) {
        if (!Object.entries(match).every(([key, value]) => point.attributes[key] === value)) continue
        total += typeof point.value === 'number' ? point.value : point.value.count
      }
    }
  }
  return total
}

/** The spans of the trace `root` is in, with `root`'s descendants found by their parents. */
function descendants(spans: ReadableSpan[], root: ReadableSpan) {
  const found: ReadableSpan[] = []
  const ids = new Set([root.spanContext().spanId])
  let grew = true
  while (grew) {
    grew = false
    for (const span of spans) {
      const parent = span.parentSpanContext?.spanId
      if (parent && ids.has(parent) && !ids.has(span.spanContext().spanId)) {
        ids.add(span.spanContext().spanId)
        found.push(span)
        grew = true
      }
    }
  }
  return found
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan) => span.spanContext().spanId
const isStatement = (span: ReadableSpan) => span.attributes['db.query.text'] !== undefined

/** No attribute of any span holds the bound value. */
function assertNoBoundValue(spans: ReadableSpan[]) {
  for (const span of spans) {
    for (const [key, value] of Object.entries(span.attributes)) {
      assert.ok(!String(value).includes(NEEDLE), `${span.name} ${key}: ${String(value)}`)
    }
  }
}

describe('OpenTelemetry', () => {
  const contextManager = new AsyncLocalStorageContextManager()
  before(() => {
    // Registered before the servers start: the plugin listens to the statements of a database only when a
    // tracer provider is there as the application is set up.
    context.setGlobalContextManager(contextManager.enable())
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    )
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  })
  after(() => {
    trace.disable()
    metrics.disable()
    context.disable()
  })

  forEachDatabase('OpenTelemetry spans and metrics', (env) => {
    const system = () => ({ sqlite: 'sqlite', mysql: 'mysql', postgres: 'postgresql' })[env.server.database]

    before(async () => {
      await clearTables(env.server.db)
      const [first, second] = await seedTodoItems(env.server.db, [
        { title: NEEDLE },
        { title: `${NEEDLE} too` },
        { title: 'other' }
      ])
      await seedSubTasks(env.server.db, [
        { todoItemId: first, title: 'a' },
        { todoItemId: second, title: 'b' }
      ])
    })
    beforeEach(() => exporter.reset())

    it('a REST list: the request span, the service call under it, its statements under that', async () => {
      const before = await metricTotal('feathers_query.requests', {
        'feathers_query.surface': 'rest',
        'http.route': '/todo-items',
        'http.response.status_code': 200
      })
      const waitsBefore = await metricTotal('db.client.connection.wait_time', { 'db.system.name': system() })
      const timedBefore = await metricTotal('http.server.request.duration', { 'http.route': '/todo-items' })
      const response = await env.server.http('GET', `/todo-items?title=${NEEDLE}`)
      assert.equal(response.status, 200)
      assert.equal(response.body.totalCount, 1)
      const spans = exporter.getFinishedSpans()
      const request = spans.find((span) => span.name === 'GET /todo-items')
      assert.ok(request, spans.map((span) => span.name).join(', '))
      assert.equal(request.kind, SpanKind.SERVER)
      assert.equal(parentOf(request), undefined)
      assert.deepEqual(request.attributes, {
        'http.request.method': 'GET',
        'http.route': '/todo-items',
        'http.response.status_code': 200
      })
      const service = spans.find((span) => span.name === 'todo-items.find')
      assert.ok(service)
      assert.equal(parentOf(service), idOf(request))
      assert.equal(service.attributes['feathers.provider'], 'rest')
      const statements = spans.filter(isStatement)
      assert.ok(statements.length >= 1)
      for (const statement of statements) {
        assert.equal(parentOf(statement), idOf(service), statement.attributes['db.query.text'] as string)
        assert.equal(statement.kind, SpanKind.CLIENT)
        assert.equal(statement.attributes['db.system.name'], system())
        assert.equal(statement.attributes['db.system'], system())
        assert.equal(statement.attributes['db.statement'], statement.attributes['db.query.text'])
        assert.equal(statement.name, 'SELECT')
      }
      // The filter's value is bound: the statement's text holds a placeholder in its place.
      assert.ok(
        statements.some((span) => /where .*(\?|\$1)/i.test(String(span.attributes['db.query.text']))),
        statements.map((span) => span.attributes['db.query.text']).join('\n')
      )
      assertNoBoundValue(spans)
      assert.equal(
        await metricTotal('feathers_query.requests', {
          'feathers_query.surface': 'rest',
          'http.route': '/todo-items',
          'http.response.status_code': 200
        }),
        before + 1
      )
      assert.ok(
        (await metricTotal('db.client.connection.wait_time', { 'db.system.name': system() })) > waitsBefore
      )
      assert.equal(
        await metricTotal('http.server.request.duration', { 'http.route': '/todo-items' }),
        timedBefore + 1
      )
    })

    it('a GraphQL query with a relation: named by its operation, measured, every statement under it', async () => {
      const response = await graphql(
        env.server,
        `
          query TodosWithTasks($title: String!) {
            todoItems(filter: { title: { like: $title } }, paging: { first: 5 }) {
              edges {
                node {
                  title
                  subTasks {
                    edges {
                      node {
                        title
                      }
                    }
                  }
                }
              }
            }
          }
        `,
        { title: `${NEEDLE}%` }
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.equal(response.data.todoItems.edges.length, 2)
      const spans = exporter.getFinishedSpans()
      const request = spans.find((span) => span.name === 'graphql TodosWithTasks')
      assert.ok(request, spans.map((span) => span.name).join(', '))
      assert.equal(request.attributes['http.route'], '/graphql')
      assert.equal(request.attributes['http.response.status_code'], 200)
      assert.equal(request.attributes['graphql.operation.type'], 'query')
      assert.equal(request.attributes['graphql.operation.name'], 'TodosWithTasks')
      assert.ok((request.attributes['feathers_query.graphql.cost'] as number) > 0)
      assert.ok((request.attributes['feathers_query.graphql.statements'] as number) >= 2)
      const below = descendants(spans, request)
      const statements = spans.filter(isStatement)
      assert.ok(statements.length >= 2, `${statements.length} statements`)
      // Every statement belongs to the request, and runs inside a service call of it.
      for (const statement of statements) {
        assert.ok(below.includes(statement), String(statement.attributes['db.query.text']))
        const parent = spans.find((span) => idOf(span) === parentOf(statement))
        assert.match(parent?.name ?? '', /^(todo-items|sub-tasks)\.find$/)
      }
      assert.ok(below.some((span) => span.name === 'sub-tasks.find'))
      assertNoBoundValue(spans)
    })

    it('a subscription counted open while it runs, and the events published to it', async () => {
      const open = () => metricTotal('feathers_query.subscriptions.open')
      const published = () =>
        metricTotal('feathers_query.events.published', { 'feathers_query.event': 'created' })
      const [openBefore, publishedBefore] = [await open(), await published()]
      const client = graphqlWsClient(env.server)
      const heard: unknown[] = []
      const stop = client.subscribe(
        { query: 'subscription { createdTodoItem { title } }' },
        { next: (value) => heard.push(value), error: () => {}, complete: () => {} }
      )
      try {
        await pollUntil(async () => (await open()) === openBefore + 1, 'the subscription counted open')
        const created = await env.server.http('POST', '/todo-items', { title: 'heard' })
        assert.equal(created.status, 201)
        await pollUntil(() => heard.length === 1, 'the event')
        assert.equal(await published(), publishedBefore + 1)
      } finally {
        stop()
        await client.dispose()
      }
      await pollUntil(async () => (await open()) === openBefore, 'the subscription counted closed')
    })

    it('a refused request: counted by the limit that refused it, the span with its status', async () => {
      const refusals = () =>
        metricTotal('feathers_query.refusals', { 'feathers_query.limit': 'maxDocumentBytes' })
      const before = await refusals()
      const response = await graphql(env.server, `{ todoItems { totalCount } } #${'x'.repeat(100_001)}`)
      assert.equal(response.errors?.[0].extensions.code, 'QUERY_TOO_LARGE')
      assert.equal(await refusals(), before + 1)
      const spans = exporter.getFinishedSpans()
      assert.deepEqual(
        spans.map((span) => [span.name, span.attributes['http.response.status_code']]),
        [['graphql', response.status]]
      )
    })
  })
})
