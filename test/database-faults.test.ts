import assert from 'node:assert/strict'
import knex, { type Knex } from 'knex'
import { createApp } from '../example/app'
import { startServer, type TestServer } from './support/server'
import { databaseNames, type DatabaseName } from './support/databases'
import { seedTodoItems } from './support/seed'
import { TcpProxy } from './support/tcp-proxy'
import { exampleResourcesApp } from './support/example-resources-app'

/** A server thread of one of the app's connections, with the statement it runs (null or '' when idle). */
interface ServerThread {
  id: number
  statement: string | null
}

/** What the fault tests do to a networked database, in its own SQL. */
interface FaultKit {
  url: string
  defaultPort: number
  /** An administrator's connection to the test database. */
  admin(databaseUrl: string): Knex
  threads(admin: Knex, database: string): Promise<ServerThread[]>
  /** Ends a thread's running statement (`query`) or its whole connection. */
  kill(admin: Knex, thread: number, what: 'query' | 'connection'): Promise<unknown>
  lockRow(holder: Knex.Transaction, database: string, id: number): Promise<unknown>
}

const faultKits: Partial<Record<DatabaseName, FaultKit>> = {
  mysql: {
    url: process.env.MYSQL_URL!,
    defaultPort: 3306,
    admin: () => knex({ client: 'mysql2', connection: process.env.MYSQL_URL }),
    async threads(admin, database) {
      const [rows] = await admin.raw('SELECT ID, INFO FROM information_schema.PROCESSLIST WHERE DB = ?', [
        database
      ])
      return rows.map((row: { ID: number; INFO: string | null }) => ({
        id: Number(row.ID),
        statement: row.INFO
      }))
    },
    kill: (admin, thread, what) => admin.raw(`${what === 'query' ? 'KILL QUERY' : 'KILL'} ${Number(thread)}`),
    lockRow: (holder, database, id) =>
      holder.raw('SELECT id FROM ??.todo_items WHERE id = ? FOR UPDATE', [database, id])
  },
  postgres: {
    url: process.env.PG_URL!,
    defaultPort: 5432,
    // PostgreSQL's connections belong to one database: the administrator connects to the test database.
    admin: (databaseUrl) => knex({ client: 'pg', connection: databaseUrl }),
    async threads(admin, database) {
      const { rows } = await admin.raw(
        "SELECT pid, CASE WHEN state = 'active' THEN query END AS statement FROM pg_stat_activity " +
          'WHERE datname = ? AND pid <> pg_backend_pid()',
        [database]
      )
      return rows.map((row: { pid: number; statement: string | null }) => ({
        id: row.pid,
        statement: row.statement
      }))
    },
    kill: (admin, thread, what) =>
      admin.raw(`SELECT ${what === 'query' ? 'pg_cancel_backend' : 'pg_terminate_backend'}(?)`, [thread]),
    lockRow: (holder, _database, id) => holder.raw('SELECT id FROM todo_items WHERE id = ? FOR UPDATE', [id])
  }
}

const networked = (['mysql', 'postgres'] as const).filter((name) => databaseNames.includes(name))
if (!networked.length) {
  describe('Database faults', () => {
    it('needs a networked database', function () {
      console.log('    (skipped: set MYSQL_URL or PG_URL to run the database fault tests)')
      this.skip()
    })
  })
}

/**
 * The database goes away while the server runs, then comes back. Only a networked database can go away,
 * so this runs on MariaDB/MySQL (MYSQL_URL) and PostgreSQL (PG_URL), and is skipped on SQLite.
 */
for (const name of networked) {
  const kit = faultKits[name]!
  describe(`Database faults [${name}]`, function () {
    let server: TestServer
    let proxy: TcpProxy

    before(async function () {
      const target = new URL(kit.url)
      proxy = new TcpProxy(target.hostname, Number(target.port || kit.defaultPort))
      await proxy.start()
      server = await startServer(name, (databaseUrl) => {
        const url = new URL(databaseUrl)
        url.hostname = '127.0.0.1'
        url.port = String(proxy.port)
        return createApp({ databaseUrl: url.toString() })
      })
      await seedTodoItems(server.db, [{ title: 'survivor' }])
    })

    after(async () => {
      await proxy?.restore()
      await server?.close()
      await proxy?.stop()
    })

    async function timed<T>(work: () => Promise<T>) {
      const started = Date.now()
      const result = await work()
      return { result, ms: Date.now() - started }
    }

    it('fails fast with 503 in Feathers error JSON while the database is down, and serves again once it is back', async function () {
      this.timeout(60000)
      assert.equal((await server.http('GET', '/todo-items')).status, 200)

      await proxy.cut()
      for (const path of ['/todo-items', '/todo-items/1', '/todo-items/export']) {
        const { result, ms } = await timed(() => server.http('GET', path))
        assert.equal(result.status, 503, `${path}: ${result.text}`)
        assert.equal(result.body.name, 'Unavailable')
        assert.equal(result.body.className, 'unavailable')
        assert.ok(ms < 6000, `${path} took ${ms} ms to fail`)
      }
      const write = await server.http('POST', '/todo-items', { title: 'lost' })
      assert.equal(write.status, 503)
      const graphql = await server.http('POST', '/graphql', {
        query: '{ todoItems { edges { node { id } } } }'
      })
      assert.ok(graphql.status < 500, `GraphQL answered ${graphql.status}`)
      assert.equal(graphql.body.errors[0].extensions.code, 'SERVICE_UNAVAILABLE')

      await proxy.restore()
      let recovered = false
      for (let attempt = 0; attempt < 5 && !recovered; attempt++) {
        recovered = (await server.http('GET', '/todo-items')).status === 200
      }
      assert.ok(recovered, 'the same server process serves again')
      const list = await server.http('GET', '/todo-items')
      assert.deepEqual(
        list.body.nodes.map((node: { title: string }) => node.title),
        ['survivor']
      )
      assert.equal((await server.http('POST', '/todo-items', { title: 'back' })).status, 201)
    })
  })

  /**
   * The database ends a request's query (`KILL QUERY`, `pg_cancel_backend`) or its whole connection (`KILL`,
   * `pg_terminate_backend`), as an administrator or a watchdog does: the request is a 503 to retry, never a 500,
   * and the pool serves on with new connections.
   */
  describe(`Database faults: killed queries and connections [${name}]`, function () {
    let server: TestServer
    let admin: Knex
    let id: number

    before(async function () {
      server = await startServer(name, exampleResourcesApp({ quietErrors: true }))
      admin = kit.admin(connection().connectionString ?? kit.url)
      ;[id] = await seedTodoItems(server.db, [{ title: 'contended' }])
    })

    after(async () => {
      await admin?.destroy()
      await server?.close()
    })

    /** The test database's connection settings: MySQL's as an object, PostgreSQL's as a URL. */
    const connection = () =>
      server.db.client.config.connection as { database?: string; connectionString?: string }
    const database = () => connection().database ?? new URL(connection().connectionString!).pathname.slice(1)

    it('answers 503 when the query or the connection of a waiting write is killed, and serves on', async () => {
      for (const what of ['query', 'connection'] as const) {
        // A row lock held elsewhere keeps the update waiting, so it can be killed while it runs.
        const holder = await admin.transaction()
        await kit.lockRow(holder, database(), id)
        const write = server.http('PATCH', `/todo-items/${id}`, { title: 'blocked' })
        let waiting: ServerThread | undefined
        for (let attempt = 0; attempt < 100 && !waiting; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          waiting = (await kit.threads(admin, database())).find((thread) =>
            /^update/i.test(thread.statement ?? '')
          )
        }
        assert.ok(waiting, 'the update waits for the row lock')
        await kit.kill(admin, waiting.id, what)
        const response = await write
        await holder.rollback()
        assert.equal(response.status, 503, `killed ${what}: ${response.text}`)
        assert.equal(response.body.name, 'Unavailable')
        assert.equal(
          (await server.http('GET', `/todo-items/${id}`)).status,
          200,
          `served again after killed ${what}`
        )
      }
    })

    it('answers 503 or serves, never 500, when idle pooled connections are killed', async () => {
      for (let round = 0; round < 5; round++) {
        await Promise.all([1, 2, 3].map(() => server.http('GET', `/todo-items/${id}`)))
        const threads = await kit.threads(admin, database())
        const killed = threads.map((thread) => kit.kill(admin, thread.id, 'connection').catch(() => {}))
        const responses = await Promise.all([1, 2, 3].map(() => server.http('GET', `/todo-items/${id}`)))
        await Promise.all(killed)
        for (const response of responses) assert.ok([200, 503].includes(response.status), response.text)
      }
      assert.equal((await server.http('GET', `/todo-items/${id}`)).status, 200)
    })
  })
}
