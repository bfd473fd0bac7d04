import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Knex } from 'knex'
import { ConfigurationError } from 'feathers-query'

/**
 * The knex client of SQLite and of MySQL: better-sqlite3 and mysql2 unless SQLITE_DRIVER=sqlite3 or
 * MYSQL_DRIVER=mysql choose the drivers apps made by the Feathers CLI use (docs/guide/drivers.md).
 */
export interface Drivers {
  sqlite: 'better-sqlite3' | 'sqlite3'
  mysql: 'mysql2' | 'mysql'
}

export function driversFromEnvironment(env: NodeJS.ProcessEnv = process.env): Drivers {
  const choose = <T extends string>(variable: string, choices: readonly T[]): T => {
    const chosen = env[variable] || choices[0]
    if (!choices.includes(chosen as T)) {
      throw new ConfigurationError(`${variable} must be ${choices.join(' or ')}, not "${chosen}"`)
    }
    return chosen as T
  }
  return {
    sqlite: choose('SQLITE_DRIVER', ['better-sqlite3', 'sqlite3'] as const),
    mysql: choose('MYSQL_DRIVER', ['mysql2', 'mysql'] as const)
  }
}

/** A SQLite connection of either driver, as far as its setup below uses it. */
interface SqliteConnection {
  /** better-sqlite3's */
  pragma?(sql: string): unknown
  /** node-sqlite3's */
  exec?(sql: string, done: (error: Error | null) => void): unknown
}

const SQLITE_SETUP = [
  'foreign_keys = ON',
  // Readers never wait for a writer, even one in another process. (Writers' waits for each other's lock are
  // the plugin's on better-sqlite3: `feathersQuery({ sqlite: { busyTimeout } })`.)
  'journal_mode = WAL'
]

function setUpSqlite(connection: SqliteConnection, done: (error: Error | null) => void) {
  if (connection.pragma) {
    for (const pragma of SQLITE_SETUP) connection.pragma(pragma)
    return done(null)
  }
  connection.exec!(SQLITE_SETUP.map((pragma) => `PRAGMA ${pragma};`).join(' '), done)
}

/**
 * Knex configuration from a database URL: `sqlite:<file>`, `sqlite::memory:`,
 * `mysql://user:pass@host:port/db` (MariaDB too) or `postgres://user:pass@host:port/db`.
 */
export function knexConfig(url: string, drivers: Drivers = driversFromEnvironment()): Knex.Config {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length)
    if (!file)
      throw new ConfigurationError('DATABASE_URL "sqlite:" needs a file name, e.g. sqlite:data/app.sqlite')
    const filename = file === ':memory:' ? ':memory:' : resolve(file)
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
    return {
      client: drivers.sqlite,
      connection: { filename },
      useNullAsDefault: true,
      // One connection: SQLite has one writer, and an in-memory database lives only as long as its connection.
      pool: { min: 1, max: 1, idleTimeoutMillis: Number.MAX_SAFE_INTEGER, afterCreate: setUpSqlite }
    }
  }
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    const parsed = new URL(url)
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''))
    if (!database) throw new ConfigurationError(`DATABASE_URL ${redact(url)} names no database`)
    const connection = {
      host: parsed.hostname,
      port: parsed.port ? Number(parsed.port) : 3306,
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
      database,
      // DATETIME columns hold UTC; the driver must not shift them by the server's time zone.
      timezone: 'Z',
      charset: 'utf8mb4',
      supportBigNumbers: true,
      connectTimeout: 5000
    }
    const mysql2Only = {
      decimalNumbers: true,
      // mysql2 gives each connection a cache of this many prepared statements, allocated in full when the
      // connection opens: four arrays of 16,000 slots by default, 512 KB of live heap per connection that
      // every full collection walks. knex sends text queries and never prepares one.
      maxPreparedStatements: 64
    }
    return {
      client: drivers.mysql,
      // mysql has neither option (it answers DECIMAL as text, which the plugin reads as a number).
      connection: drivers.mysql === 'mysql2' ? { ...connection, ...mysql2Only } : connection,
      pool: { min: 0, max: 10 },
      acquireConnectionTimeout: 5000
    }
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    if (!new URL(url).pathname.replace(/^\//, '')) {
      throw new ConfigurationError(`DATABASE_URL ${redact(url)} names no database`)
    }
    return {
      client: 'pg',
      // pg reads the URL itself (user, password, host, port, database, ssl parameters).
      connection: { connectionString: url, connectionTimeoutMillis: 5000 },
      pool: { min: 0, max: 10 },
      acquireConnectionTimeout: 5000
    }
  }
  throw new ConfigurationError(
    `Unsupported DATABASE_URL "${redact(url)}": use sqlite:<file>, sqlite::memory:, mysql://user:pass@host:port/db or postgres://user:pass@host:port/db`
  )
}

/** The URL without its password, for messages. */
export function redact(url: string) {
  return url.replace(/(\/\/[^:/@]+):[^@]*@/, '$1:***@')
}
