import assert from 'node:assert/strict'
import { startServer, type TestServer } from './support/server'
import { readsSynchronously } from './support/databases'

interface SqliteConnection {
  prepare(sql: string): unknown
  pragma(sql: string, options?: { simple: boolean }): unknown
}

/**
 * On better-sqlite3 the plugin keeps its own statements prepared and waits for SQLite's write lock in its own
 * transactions, without changing the application's knex instance: its client, its connections and the
 * transactions of the application's other code stay as the application configured them.
 */
// Prepared statements and the plugin's wait for the lock are better-sqlite3's (see docs/guide/drivers.md).
const onBetterSqlite = readsSynchronously('sqlite') ? describe : describe.skip

onBetterSqlite("SQLite: the plugin leaves the application's knex instance as it is [sqlite]", function () {
  let server: TestServer
  let connection: SqliteConnection

  before(async function () {
    this.timeout(60000)
    server = await startServer('sqlite')
    const client = server.db.client as {
      acquireConnection(): Promise<unknown>
      releaseConnection(c: unknown): unknown
    }
    connection = (await client.acquireConnection()) as SqliteConnection
    await client.releaseConnection(connection)
  })

  after(async () => {
    await server?.close()
  })

  it('replaces none of the client methods or connection methods', async () => {
    await server.http('POST', '/todo-items', { title: 'written' }, { 'user-name': 'ann' })
    await server.http('GET', '/todo-items?limit=5')
    // A date bucket in a time zone registers the plugin's SQLite function on the connection it runs on.
    const buckets = await server.http('POST', '/graphql', {
      query: '{ todoItemAggregate { groupBy { created(by: HOUR, timeZone: "Europe/Berlin") } count { id } } }'
    })
    assert.equal(buckets.body.errors, undefined, JSON.stringify(buckets.body.errors))
    for (const method of ['acquireConnection', 'releaseConnection', 'transaction', 'query', '_query']) {
      assert.ok(!Object.hasOwn(server.db.client, method), `client.${method} is knex's own`)
    }
    assert.ok(!Object.hasOwn(connection, 'prepare'), "connection.prepare is better-sqlite3's own")
  })

  it("takes the lock in its own transactions only, and keeps the connection's busy timeout", async () => {
    connection.pragma('busy_timeout = 3210')
    const plugin = await server.recordStatements(() =>
      server.http('POST', '/todo-items', { title: 'locked' }, { 'user-name': 'ann' })
    )
    assert.ok(plugin.includes('BEGIN IMMEDIATE;'), plugin.join('\n'))
    assert.equal(connection.pragma('busy_timeout', { simple: true }), 3210)
    const own = await server.recordStatements(() => server.db.transaction((trx) => trx('todo_items').count()))
    assert.ok(own.includes('BEGIN;') && !own.includes('BEGIN IMMEDIATE;'), own.join('\n'))
  })

  it('prepares each of its reads once, and reports them to knex query listeners', async () => {
    const prepared: string[] = []
    const prepare = connection.prepare
    // The test's own probe: counts what the connection prepares while the plugin reads a record twice.
    connection.prepare = (sql: string) => {
      prepared.push(sql)
      return prepare.call(connection, sql)
    }
    try {
      const reported = await server.recordStatements(async () => {
        assert.equal((await server.http('GET', '/todo-items/1')).status, 200)
        assert.equal((await server.http('GET', '/todo-items/1')).status, 200)
      })
      assert.equal(reported.length, 2, reported.join('\n'))
      assert.equal(reported[0], reported[1])
      assert.ok(prepared.filter((sql) => sql === reported[0]).length <= 1, prepared.join('\n'))
    } finally {
      delete (connection as Partial<SqliteConnection>).prepare
    }
  })
})
