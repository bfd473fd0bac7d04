import type { Knex } from 'knex'

/** What knex does for a query once it is compiled, as its client (or a transaction's) exposes it. */
interface QueryingClient {
  acquireConnection(): Promise<Connection>
  releaseConnection(connection: Connection): Promise<unknown>
  /** Binds and positions the values as the dialect does, reports to `on('query')`, runs, names the SQL in errors. */
  query(connection: Connection, query: QueryObject): Promise<QueryObject>
  processResponse(query: QueryObject, runner: undefined): unknown
  postProcessResponse(response: unknown, queryContext: undefined): unknown
  listenerCount(event: string): number
  emit(event: 'query-response', response: unknown, query: object, builder: undefined): boolean
}

interface Connection {
  __knexUid?: string
  __knexTxId?: string
}

interface QueryObject {
  method: 'raw'
  sql: string
  bindings: readonly unknown[]
}

/**
 * Runs SQL that knex compiled before (the text and its bindings) the way knex runs a raw statement, without
 * building one: `knex.raw(sql, bindings)` would make a Raw builder, scan the text again for its `?`s and
 * make a Runner for every call, which on MySQL and PostgreSQL costs more than a primary-key read's own work
 * in Node. The connection comes from the pool, or is the call's transaction's (whose client refuses a query
 * after the transaction ended, as with knex.raw); the client's own `query` reports the statement to
 * `on('query')` and `on('query-error')` and names the SQL in a failure's message; the response is processed
 * as a raw statement's and passed through the application's `postProcessResponse`, and reported to
 * `on('query-response')` when something listens.
 */
export async function runCompiledQuery(knex: Knex, sql: string, bindings: readonly unknown[]) {
  const client = knex.client as unknown as QueryingClient
  const connection = await client.acquireConnection()
  try {
    const query: QueryObject = { method: 'raw', sql, bindings }
    const response = client.postProcessResponse(client.processResponse(await client.query(connection, query), undefined), undefined)
    if (client.listenerCount('query-response') > 0) {
      const { __knexUid, __knexTxId } = connection
      client.emit('query-response', response, { __knexUid, __knexTxId, ...query }, undefined)
    }
    return response
  } finally {
    await client.releaseConnection(connection)
  }
}
