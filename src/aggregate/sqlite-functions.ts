import type { Knex } from 'knex'
import { SQLITE_BUCKET_FUNCTION } from '../dialect/sqlite'
import type { DateBucket } from '../model/aggregate'
import { betterSqliteClient } from '../dialect/better-sqlite3'
import { bucketKeyOf } from './time-zone'

interface FunctionConnection {
  function(
    name: string,
    options: { deterministic: boolean },
    implementation: (...args: never[]) => unknown
  ): unknown
}

const registered = new WeakSet<object>()

/**
 * SQLite has no time zones: date buckets in a zone other than UTC call a function the plugin registers on the
 * better-sqlite3 connection (`db.function`), which SQLite calls for each row while it groups, so the work
 * stays in the statement. It is added once per connection, the first time one of these statements runs on
 * it; the connection and the knex instance are otherwise left as the application made them.
 */
function register(connection: FunctionConnection) {
  if (registered.has(connection)) return
  connection.function(SQLITE_BUCKET_FUNCTION, { deterministic: true }, ((
    time: number | bigint | null,
    bucket: DateBucket,
    zone: string
  ) => bucketKeyOf(time === null ? null : Number(time), bucket, zone)) as (...args: never[]) => unknown)
  registered.add(connection)
}

/**
 * Runs `query` on a connection of `knex` (the pool's, or the transaction's own) that has the plugin's SQLite
 * functions; on other databases it just runs it.
 */
export async function withSqliteFunctions<T>(
  knex: Knex,
  query: Knex.QueryBuilder,
  run: (query: Knex.QueryBuilder) => Promise<T>
) {
  const client = betterSqliteClient(knex)
  if (!client) return run(query)
  const connection = (await client.acquireConnection()) as FunctionConnection
  try {
    register(connection)
    return await run(query.connection(connection))
  } finally {
    await client.releaseConnection(connection)
  }
}
