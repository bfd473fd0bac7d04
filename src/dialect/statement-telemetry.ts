import { context, SpanKind, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api'
import type { Knex } from 'knex'
import { instruments, metering, tracer, tracing } from '../telemetry/telemetry'
import { dialectOf } from './dialect-of'

/** OpenTelemetry's `db.system.name` of each dialect. */
const SYSTEM_NAMES = { sqlite: 'sqlite', mysql: 'mysql', postgres: 'postgresql' } as const

interface QueryEvent {
  sql?: string
  __knexQueryUid?: string
}

/** The pool knex's client keeps (tarn), for its acquire events. */
interface EventfulPool {
  on(event: 'acquireRequest' | 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): void
}

const instrumented = new WeakSet<Knex>()

/**
 * Reports the statements `knex` runs as spans (under the span active where they were started: the service
 * call's) and how long they waited for a pooled connection, through knex's own events, which the plugin's
 * compiled statements report too. A span carries the statement's text as knex compiled it, with
 * placeholders: the bound values are never read. Only while a tracer provider is registered when the
 * application is set up: without one, listening would make every statement report its response for nothing.
 */
export function instrumentDatabase(knex: Knex) {
  if (instrumented.has(knex)) return
  instrumented.add(knex)
  const system = SYSTEM_NAMES[dialectOf(knex).name]
  if (tracing()) traceStatements(knex, system)
  const pool = (knex.client as { pool?: EventfulPool }).pool
  if (pool && typeof pool.on === 'function') timePoolWaits(pool, system)
}

function traceStatements(knex: Knex, system: string) {
  const open = new Map<string, Span>()
  knex.on('query', (query: QueryEvent) => {
    if (!query.__knexQueryUid || !tracing()) return
    const sql = query.sql ?? ''
    const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase()
    const attributes: Attributes = {
      'db.system.name': system,
      'db.query.text': sql,
      // The names before OpenTelemetry's database conventions became stable, which many back ends still read.
      'db.system': system,
      'db.statement': sql
    }
    if (operation) attributes['db.operation.name'] = operation
    const span = tracer.startSpan(
      operation ?? system,
      { kind: SpanKind.CLIENT, attributes },
      context.active()
    )
    open.set(query.__knexQueryUid, span)
  })
  const end = (query: QueryEvent | undefined, error?: Error) => {
    const id = query?.__knexQueryUid
    const span = id === undefined ? undefined : open.get(id)
    if (!span) return
    open.delete(id!)
    if (error) {
      span.setStatus({ code: SpanStatusCode.ERROR })
      span.setAttribute('error.type', (error as { code?: string }).code ?? error.name)
    }
    span.end()
  }
  knex.on('query-response', (_response: unknown, query: QueryEvent) => end(query))
  knex.on('query-error', (error: Error, query: QueryEvent) => end(query, error))
}

function timePoolWaits(pool: EventfulPool, system: string) {
  const started = new Map<number, number>()
  const attributes = { 'db.system.name': system }
  pool.on('acquireRequest', (id) => {
    if (metering()) started.set(id, performance.now())
  })
  const done = (id: number) => {
    const start = started.get(id)
    if (start === undefined) return
    started.delete(id)
    instruments().poolWaits.record((performance.now() - start) / 1000, attributes)
  }
  pool.on('acquireSuccess', done)
  pool.on('acquireFail', (id) => started.delete(id))
}
