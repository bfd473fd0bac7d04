/**
 * The defaults of the plugin's and the resources' options, in one table: where an option is left out, this
 * is what holds. (The `searchFields` hook keeps its own, beside its options.)
 */
export const DEFAULTS = Object.freeze({
  /** A page's size when the client asks for none, per surface (`query.defaultResultSize` overrides both). */
  pageSize: Object.freeze({ rest: 25, graphql: 10 }),
  /** `query.maxResultsSize`: the largest page a client may ask for. */
  maxResultsSize: 50,
  /** `query.exactCountBelow`: the planned rows below which `countStrategy: 'estimated'` counts exactly. */
  exactCountBelow: 10_000,
  /** `aggregate.maxGroups`: the most groups one aggregate answers. */
  maxAggregateGroups: 1000,
  /** `aggregate.maxFillBuckets`: the most buckets a filled date series spans. */
  maxFillBuckets: 10_000,
  /** `maxMulti`: the most records one multi create, patch or remove changes. */
  maxMulti: 100,
  /** `export.batchSize` and `export.maxBatchMilliseconds`: how the CSV export reads. */
  exportBatches: Object.freeze({ size: 1000, maxMilliseconds: 50 }),
  /** `export.bom` and `export.dateFormat`: how the CSV export writes its text and its date-times. */
  exportCsv: Object.freeze({ bom: false, dateFormat: 'iso' as const }),
  /** `import.*`: lines per transaction and the limits of one import (sizes in bytes). */
  import: Object.freeze({
    batchSize: 500,
    maxBytes: 2 ** 30,
    maxRows: 10_000_000,
    maxLineBytes: 2 ** 20,
    maxErrors: 1000,
    readAheadBytes: 2 ** 28
  }),
  /** `sqlite.busyTimeout`: how long a write on SQLite waits for another process's lock, in milliseconds. */
  sqliteBusyTimeout: 5000,
  /** `limits`: what one filter may hold on every surface, and the statements kept per shape. */
  queryLimits: Object.freeze({
    maxFilterDepth: 16,
    maxComparisons: 100,
    maxListLength: 1000,
    maxFilterValues: 10_000,
    maxPatternLength: 1000,
    maxRelationFilters: 10,
    maxRelationDepth: 3,
    compiledStatementBytes: 2 ** 20,
    preparedStatementBytes: 2 ** 20
  }),
  /** `graphql.limits`: what one GraphQL document and one WebSocket connection may ask for. */
  graphqlLimits: Object.freeze({
    maxDepth: 12,
    maxComplexity: 25_000,
    maxStatements: 50,
    maxConcurrentStatements: 2,
    maxTokens: 10_000,
    maxDocumentBytes: 100_000,
    documentCacheBytes: 20_000_000,
    maxSubscriptions: 10,
    maxQueuedEvents: 100,
    maxMessageBytes: 1_048_576,
    maxConnections: 1000,
    maxConnectionsPerUser: 10
  }),
  /** `graphql.maxBatchOperations`: operations one POST may hold as a JSON array. */
  graphqlMaxBatchOperations: 10,
  /** `realtime`: the socket.io connections one user may hold logged in. */
  realtime: Object.freeze({ maxConnectionsPerUser: 10 }),
  /** `health`: where the readiness and liveness routes are, and how long a database may take to answer. */
  health: Object.freeze({ path: '/health', timeout: 1000 }),
  /** `gracefulShutdown()`: the signals it answers, and how long each of its waits may take (ms). */
  shutdown: Object.freeze({ signals: Object.freeze(['SIGTERM', 'SIGINT'] as const), timeout: 10_000 }),
  /** `checkSchema`: whether setup checks every resource's table against its schema. */
  checkSchema: true,
  /** `caching`: tags and 304s on reads, and the `Cache-Control` of a tagged read (revalidated each time). */
  caching: Object.freeze({ enabled: true, cacheControl: 'private, no-cache' })
})

export const REST_DEFAULT_RESULT_SIZE = DEFAULTS.pageSize.rest
export const GRAPHQL_DEFAULT_RESULT_SIZE = DEFAULTS.pageSize.graphql
