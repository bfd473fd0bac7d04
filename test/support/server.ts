import type { Application } from '@feathersjs/koa'
import type { Knex } from 'knex'
import { createServer, type Server, type ServerOptions } from 'node:http'
import { createApp } from '../../example/app'
import {
  createTestDatabase,
  databaseLabel,
  databaseNames,
  type DatabaseName,
  type TestDatabase
} from './databases'
import { httpClient, type Http } from './http'

/** A running server on a fresh database, with an HTTP client and a counter of SQL statements. */
export interface TestServer {
  database: DatabaseName
  app: Application
  db: Knex
  baseUrl: string
  http: Http
  /** Runs `work` and returns how many SQL statements it caused (migrations excluded). */
  countStatements(work: () => Promise<unknown>): Promise<number>
  /** The SQL statements `work` caused. */
  recordStatements(work: () => Promise<unknown>): Promise<string[]>
  /**
   * The listeners of a service's `created` event beyond those it had once the app started (the app's own,
   * such as the write generation's): one while anyone subscribes to any of the resource's events.
   */
  subscriptionListeners(path: string): number
  close(): Promise<void>
}

export type AppFactory = (databaseUrl: string) => Promise<{ app: Application; db: Knex }>

export const exampleApp: AppFactory = (databaseUrl) => createApp({ databaseUrl })

/** The app's server, as `app.listen` makes it, or with Node's `options` (its timeouts, say). */
async function listen(app: Application, options?: ServerOptions): Promise<Server> {
  if (!options) return app.listen(0)
  const server = createServer(options, app.callback())
  await new Promise<void>((resolve) => server.listen(0, resolve))
  ;(app as { server?: Server }).server = server
  await app.setup(server)
  return server
}

export async function startServer(
  database: DatabaseName,
  factory: AppFactory = exampleApp,
  serverOptions?: ServerOptions
): Promise<TestServer> {
  const testDatabase: TestDatabase = await createTestDatabase(database)
  const { app, db } = await factory(testDatabase.url)
  const server = await listen(app, serverOptions)
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const baseUrl = `http://127.0.0.1:${port}`
  const idle = new Map(
    Object.keys(app.services).map((path) => [path, app.service(path).listenerCount('created')])
  )
  let recording: string[] | undefined
  db.on('query', (query: { sql: string }) => recording?.push(query.sql))
  const recordStatements = async (work: () => Promise<unknown>) => {
    recording = []
    try {
      await work()
      return recording
    } finally {
      recording = undefined
    }
  }
  return {
    database,
    app,
    db,
    baseUrl,
    http: httpClient(baseUrl),
    recordStatements,
    countStatements: async (work) => (await recordStatements(work)).length,
    subscriptionListeners: (path) => app.service(path).listenerCount('created') - (idle.get(path) ?? 0),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections?.()
      await db.destroy()
      await testDatabase.drop()
    }
  }
}

/**
 * Declares hooks that start a fresh server on `database` before the enclosing suite's tests and close it after
 * them; `env.server` is that server.
 */
export function serverOn(
  database: DatabaseName,
  factory: AppFactory = exampleApp,
  serverOptions?: ServerOptions
) {
  const env = {} as { server: TestServer }
  before(async function () {
    this.timeout(60000)
    env.server = await startServer(database, factory, serverOptions)
  })
  after(async () => {
    await env.server?.close()
  })
  return env as { readonly server: TestServer }
}

/**
 * Declares `suite` once per database: `forEachDatabase('REST list', (env) => { it(...) })`, where `env.server`
 * is a fresh server started before the suite's tests and closed after them.
 */
export function forEachDatabase(
  title: string,
  suite: (env: { readonly server: TestServer }) => void,
  factory: AppFactory = exampleApp,
  serverOptions?: ServerOptions
) {
  for (const database of databaseNames) {
    describe(`${title} [${databaseLabel(database)}]`, function () {
      suite(serverOn(database, factory, serverOptions))
    })
  }
}
