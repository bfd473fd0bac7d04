import type { Knex } from 'knex'
import { queryUid, reportResponse, type QueryConnection, type QueryEventSource } from './query-events'

/** What knex does for a query once it is compiled, as its client (or a transaction's) exposes it. */
interface QueryingClient extends QueryEventSource {
  acquireConnection(): Promise<QueryConnection>
  releaseConnection(connection: QueryConnection): Promise<unknown>
  /** Binds and positions the values as the dialect does, reports to `on('query')`, runs, names the SQL in errors. */
  query(connection: QueryConnection, query: QueryObject): Promise<QueryObject>
  processResponse(query: QueryObject, runner: undefined): unknown
  postProcessResponse(response: unknown, queryContext: undefined): unknown
}

interface QueryObject {
  method: 'raw'
  sql: string
  bindings: readonly unknown[]
  /** The driver's options for this query, which knex's clients pass on with the SQL. */
  options?: Readonly<Record<string, unknown>>
  __knexQueryUid: string
}

/**
 * Runs SQL that knex compiled before (the text and its bindings) the way knex runs a raw statement, without
 * building one: `knex.raw(sql, bindings)` would make a Raw builder, scan the text again for its `?`s and
 * make a Runner for every call, which on MySQL and PostgreSQL costs more than a primary-key read's own work
 * in Node. The connection comes from the pool, or is the call's transaction's (whose client refuses a query
 * after the transaction ended, as with knex.raw); the client's own `query` reports the statement to
 * `on('query')` and `on('query-error')` and names the SQL in a failure's message; the response is processed
 * as a raw statement's and passed through the application's `postProcessResponse`, and reported to
 * `on('query-response')` when something listens, with the query's own `__knexQueryUid` as knex gives one.
 */
export async function runCompiledQuery(
  knex: Knex,
  sql: string,
  bindings: readonly unknown[],
  options?: Readonly<Record<string, unknown>>
) {
  const client = knex.client as unknown as QueryingClient
  const connection = await client.acquireConnection()
  try {
    const query: QueryObject = { method: 'raw', sql, bindings, options, __knexQueryUid: queryUid() }
    const response = client.postProcessResponse(
      client.processResponse(await client.query(connection, query), undefined),
      undefined
    )
    reportResponse(client, connection, query, response)
    return response
  } finally {
    await client.releaseConnection(connection)
  }
}
