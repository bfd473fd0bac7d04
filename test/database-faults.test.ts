import assert from 'node:assert/strict'
import knex, { type Knex } from 'knex'
import { createApp } from '../example/app'
import { startServer, type TestServer } from './support/server'
import { databaseNames, type DatabaseName } from './support/databases'
import { seedTodoItems } from './support/seed'
import { TcpProxy } from './support/tcp-proxy'
import { exampleResourcesApp } from './support/example-resources-app'
import { pollUntil } from './support/eventually'

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
  /**
   * The statements of the database's connections that wait for a lock now. InnoDB refreshes what it shows of
   * its transactions only once they went unread for 0.1 s: poll less often than that.
   */
  lockWaits(admin: Knex, database: string): Promise<string[]>
  /** Holds the whole todo_items table until `unlockTable`: reads of it wait as well as writes. */
  lockTable(holder: Knex.Transaction, database: string): Promise<unknown>
  unlockTable(holder: Knex.Transaction): Promise<unknown>
  /**
   * Makes the database end every statement of the connections made to `databaseUrl` after `ms`, as an
   * administrator does (MariaDB: a user `WITH MAX_STATEMENT_TIME`; PostgreSQL: the database's
   * `statement_timeout`), and answers the URL to connect with. `undo` removes what it made.
   */
  withDeadline(databaseUrl: string, ms: number): Promise<{ url: string; undo(): Promise<void> }>
}

/** The application name of the test's administrator connections on PostgreSQL. */
const PG_ADMIN = 'feathers-query-test-admin'

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
      holder.raw('SELECT id FROM ??.todo_items WHERE id = ? FOR UPDATE', [database, id]),
    async lockWaits(admin, database) {
      const [rows] = await admin.raw(
        'SELECT t.trx_query AS statement FROM information_schema.INNODB_TRX t ' +
          'JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id ' +
          "WHERE t.trx_state = 'LOCK WAIT' AND p.DB = ?",
        [database]
      )
      return rows.map((row: { statement: string | null }) => row.statement ?? '')
    },
    lockTable: (holder, database) => holder.raw('LOCK TABLES ??.todo_items WRITE', [database]),
    // LOCK TABLES outlives the transaction: the connection would go back to the pool holding it.
    unlockTable: (holder) => holder.raw('UNLOCK TABLES'),
    async withDeadline(databaseUrl, ms) {
      const url = new URL(databaseUrl)
      const database = url.pathname.slice(1)
      const user = `fq_deadline_${database}`.slice(0, 80)
      const admin = knex({ client: 'mysql2', connection: process.env.MYSQL_URL })
      // Left over by a run that was stopped before its clean-up.
      await admin.raw(`DROP USER IF EXISTS ??@'%'`, [user])
      await admin.raw(`CREATE USER ??@'%' WITH MAX_STATEMENT_TIME ${ms / 1000}`, [user])
      await admin.raw(`GRANT ALL ON ??.* TO ??@'%'`, [database, user])
      await admin.destroy()
      url.username = user
      url.password = ''
      return {
        url: url.toString(),
        async undo() {
          const dropper = knex({ client: 'mysql2', connection: process.env.MYSQL_URL })
          await dropper.raw(`DROP USER IF EXISTS ??@'%'`, [user])
          await dropper.destroy()
        }
      }
    }
  },
  postgres: {
    url: process.env.PG_URL!,
    defaultPort: 5432,
    // PostgreSQL's connections belong to one database: the administrator connects to the test database,
    // under a name of its own, so that `threads` lists the server's connections and none of its pool's.
    admin: (databaseUrl) =>
      knex({ client: 'pg', connection: { connectionString: databaseUrl, application_name: PG_ADMIN } }),
    async threads(admin, database) {
      const { rows } = await admin.raw(
        "SELECT pid, CASE WHEN state = 'active' THEN query END AS statement FROM pg_stat_activity " +
          'WHERE datname = ? AND application_name <> ?',
        [database, PG_ADMIN]
      )
      return rows.map((row: { pid: number; statement: string | null }) => ({
        id: row.pid,
        statement: row.statement
      }))
    },
    kill: (admin, thread, what) =>
      admin.raw(`SELECT ${what === 'query' ? 'pg_cancel_backend' : 'pg_terminate_backend'}(?)`, [thread]),
    lockRow: (holder, _database, id) => holder.raw('SELECT id FROM todo_items WHERE id = ? FOR UPDATE', [id]),
    async lockWaits(admin, database) {
      const { rows } = await admin.raw(
        "SELECT query AS statement FROM pg_stat_activity WHERE datname = ? AND wait_event_type = 'Lock'",
        [database]
      )
      return rows.map((row: { statement: string }) => row.statement)
    },
    lockTable: (holder) => holder.raw('LOCK TABLE todo_items IN ACCESS EXCLUSIVE MODE'),
    // Released with the transaction.
    unlockTable: async () => undefined,
    async withDeadline(databaseUrl, ms) {
      const database = new URL(databaseUrl).pathname.slice(1)
      const admin = knex({ client: 'pg', connection: databaseUrl })
      await admin.raw(`ALTER DATABASE ?? SET statement_timeout = ${Number(ms)}`, [database])
      await admin.destroy()
      // The database goes with the test server.
      return { url: databaseUrl, undo: async () => undefined }
    }
  }
}

async function timed<T>(work: () => Promise<T>) {
  const started = Date.now()
  const result = await work()
  return { result, ms: Date.now() - started }
}

/** Every kind of request, each checked for a 503 (GraphQL: SERVICE_UNAVAILABLE) within `withinMs`. */
async function assertAllUnavailable(server: TestServer, withinMs: number) {
  const requests: Array<[string, string, unknown?]> = [
    ['GET', '/todo-items'],
    ['GET', '/todo-items/1'],
    ['GET', '/todo-items/export'],
    ['POST', '/todo-items', { title: 'lost' }],
    ['PATCH', '/todo-items/1', { title: 'lost' }],
    ['DELETE', '/todo-items/1'],
    ['POST', '/graphql', { query: '{ todoItems { edges { node { id } } } }' }]
  ]
  // At once, as clients would send them: each is bounded, not their sum.
  const outcomes = await Promise.all(
    requests.map(([method, path, body]) => timed(() => server.http(method, path, body)))
  )
  outcomes.forEach(({ result, ms }, index) => {
    const [method, path] = requests[index]
    const label = `${method} ${path}`
    if (path === '/graphql') {
      assert.ok(result.status < 500, `${label} answered ${result.status}`)
      assert.equal(
        result.body.errors?.[0]?.extensions.code,
        'SERVICE_UNAVAILABLE',
        `${label}: ${result.text}`
      )
    } else {
      assert.equal(result.status, 503, `${label}: ${result.text}`)
      assert.equal(result.body.name, 'Unavailable')
      assert.equal(result.body.className, 'unavailable')
    }
    assert.ok(ms < withinMs, `${label} took ${ms} ms to fail (at most ${withinMs})`)
  })
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

    async function assertServesAgain() {
      await proxy.restore()
      let recovered = false
      for (let attempt = 0; attempt < 5 && !recovered; attempt++) {
        recovered = (await server.http('GET', '/todo-items')).status === 200
      }
      assert.ok(recovered, 'the same server process serves again')
      const list = await server.http('GET', '/todo-items?title=survivor')
      assert.deepEqual(
        list.body.nodes.map((node: { title: string }) => node.title),
        ['survivor']
      )
      const created = await server.http('POST', '/todo-items', { title: 'back' })
      assert.equal(created.status, 201)
      assert.equal((await server.http('DELETE', `/todo-items/${created.body.id}`)).status, 200)
    }

    it('fails fast with 503 in Feathers error JSON while the database is down, and serves again once it is back', async function () {
      this.timeout(60000)
      assert.equal((await server.http('GET', '/todo-items')).status, 200)
      await proxy.cut()
      // Refused connections fail at once; a second is room for a loaded machine, not for any waiting.
      await assertAllUnavailable(server, 1000)
      await assertServesAgain()
    })

    it('answers 503 once the connect timeout has passed while the database hangs without refusing, and recovers', async function () {
      this.timeout(60000)
      // The pool's connections are reset first (a network that drops a database's packets also ends up
      // resetting what was open): new ones are accepted and never answered.
      await proxy.cut()
      await proxy.hang()
      // The example's connectTimeout and acquireConnectionTimeout are 5 s.
      await assertAllUnavailable(server, 5000 + 2000)
      await assertServesAgain()
    })

    it('ends an export cut off midway with an error instead of a short file that looks whole, and serves again', async function () {
      this.timeout(60000)
      await seedTodoItems(
        server.db,
        Array.from({ length: 20000 }, (_, index) => ({ title: `Row ${index}` }))
      )
      const response = await fetch(`${server.baseUrl}/todo-items/export`)
      assert.equal(response.status, 200)
      const reader = response.body!.getReader()
      const first = await reader.read()
      assert.ok(first.value && first.value.length > 0, 'the export started')
      await proxy.cut()
      const started = Date.now()
      let received = first.value.length
      const ended = await (async () => {
        try {
          for (;;) {
            const chunk = await reader.read()
            if (chunk.done) return 'complete'
            received += chunk.value.length
          }
        } catch {
          return 'aborted'
        }
      })()
      assert.equal(ended, 'aborted', `the export ended as if complete after ${received} bytes`)
      assert.ok(Date.now() - started < 1000, `the export took ${Date.now() - started} ms to end`)
      await assertServesAgain()
      await server.db('todo_items').whereNot('title', 'survivor').delete()
    })

    it('answers 503 to a write whose connection is cut while it runs, and keeps nothing of it', async function () {
      this.timeout(60000)
      const [id] = await seedTodoItems(server.db, [{ title: 'locked' }])
      // A row lock held on a connection of its own, past the proxy, keeps the write waiting while it is cut.
      const settings = server.db.client.config.connection as { database?: string; connectionString?: string }
      const database = settings.database ?? new URL(settings.connectionString!).pathname.slice(1)
      const admin = kit.admin(settings.connectionString ?? kit.url)
      const holder = await admin.transaction()
      try {
        await kit.lockRow(holder, database, id)
        const write = server.http('PATCH', `/todo-items/${id}`, { title: 'half written' })
        await pollUntil(
          async () => (await kit.lockWaits(admin, database)).some((statement) => /^update/i.test(statement)),
          'the write to wait for the row lock',
          { everyMs: 150 }
        )
        const { result, ms } = await timed(async () => {
          await proxy.cut()
          return write
        })
        assert.equal(result.status, 503, result.text)
        assert.ok(ms < 1000, `the write took ${ms} ms to fail once cut`)
      } finally {
        await holder.rollback()
        await admin.destroy()
      }
      await assertServesAgain()
      assert.equal((await server.http('GET', `/todo-items/${id}`)).body.title, 'locked')
    })
  })

  /**
   * The database ends every statement that runs longer than a deadline its administrator set: a request
   * whose statement it ended is a 503 to retry (GraphQL: SERVICE_UNAVAILABLE), soon after the deadline,
   * never a 500, and nothing of a write is left.
   */
  describe(`Database faults: a statement deadline the database enforces [${name}]`, function () {
    const DEADLINE_MS = 300
    let server: TestServer
    let admin: Knex
    let undo: (() => Promise<void>) | undefined

    before(async function () {
      server = await startServer(name, async (databaseUrl) => {
        const deadline = await kit.withDeadline(databaseUrl, DEADLINE_MS)
        undo = deadline.undo
        return exampleResourcesApp({ quietErrors: true })(deadline.url)
      })
      admin = kit.admin(connection().connectionString ?? kit.url)
      await seedTodoItems(server.db, [{ title: 'survivor' }])
    })

    after(async () => {
      await admin?.destroy()
      await server?.close()
      await undo?.()
    })

    const connection = () =>
      server.db.client.config.connection as { database?: string; connectionString?: string }
    const database = () => connection().database ?? new URL(connection().connectionString!).pathname.slice(1)

    it('answers 503 for every request whose statement outlived the deadline, and serves on', async function () {
      this.timeout(30000)
      const holder = await admin.transaction()
      try {
        await kit.lockTable(holder, database())
        await assertAllUnavailable(server, DEADLINE_MS + 2000)
      } finally {
        await kit.unlockTable(holder)
        await holder.rollback()
      }
      const list = await server.http('GET', '/todo-items')
      assert.equal(list.status, 200, list.text)
      assert.deepEqual(
        list.body.nodes.map((node: { title: string }) => node.title),
        ['survivor'],
        'nothing was written'
      )
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
      // A pooled connection killed while idle may not be known dead yet: it fails the one request that meets
      // it (a 503 to retry) and leaves the pool. Within the pool's size the server serves again.
      let status = 0
      for (let attempt = 0; attempt <= 10 && status !== 200; attempt++) {
        status = (await server.http('GET', `/todo-items/${id}`)).status
        assert.ok([200, 503].includes(status), `answered ${status}`)
      }
      assert.equal(status, 200, 'the pool serves again with new connections')
    })
  })
}
