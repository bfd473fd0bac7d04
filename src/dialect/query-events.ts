/** What the plugin reports to a knex instance's listeners of the statements it runs itself. */
export interface QueryEventSource {
  listenerCount(event: string): number
  emit(event: string, ...args: unknown[]): boolean
}

export interface QueryConnection {
  __knexUid?: string
  __knexTxId?: string
}

let lastQuery = 0

/**
 * A query's own id, as knex gives each query it builds (`__knexQueryUid`): listeners that time statements
 * pair `query` with `query-response` by it, and two statements running side by side (a page and its count)
 * must not share one.
 */
export function queryUid() {
  return `feathers-query-${++lastQuery}`
}

/** Reports a statement's result to `on('query-response')` listeners, when there are any, as knex does. */
export function reportResponse(
  client: QueryEventSource,
  connection: QueryConnection,
  query: object,
  response: unknown
) {
  report(client, 'query-response', response, connection, query)
}

/**
 * Reports a statement's failure to `on('query-error')` listeners, as knex does, so that a listener pairing it
 * with `on('query')` (a span, a timer) hears its end.
 */
export function reportError(
  client: QueryEventSource,
  connection: QueryConnection,
  query: object,
  error: unknown
) {
  report(client, 'query-error', error, connection, query)
}

function report(
  client: QueryEventSource,
  event: 'query-response' | 'query-error',
  outcome: unknown,
  connection: QueryConnection,
  query: object
) {
  if (client.listenerCount(event) === 0) return
  const { __knexUid, __knexTxId } = connection
  client.emit(event, outcome, { __knexUid, __knexTxId, ...query }, undefined)
}
