import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Knex } from 'knex'
import { ConfigurationError } from 'feathers-query'

/**
 * Knex configuration from a database URL: `sqlite:<file>`, `sqlite::memory:`,
 * `mysql://user:pass@host:port/db` (MariaDB too) or `postgres://user:pass@host:port/db`.
 */
export function knexConfig(url: string): Knex.Config {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length)
    if (!file)
      throw new ConfigurationError('DATABASE_URL "sqlite:" needs a file name, e.g. sqlite:data/app.sqlite')
    const filename = file === ':memory:' ? ':memory:' : resolve(file)
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
    return {
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      // One connection: SQLite has one writer, and an in-memory database lives only as long as its connection.
      pool: {
        min: 1,
        max: 1,
        idleTimeoutMillis: Number.MAX_SAFE_INTEGER,
        afterCreate: (connection: { pragma(sql: string): unknown }, done: (error: Error | null) => void) => {
          connection.pragma('foreign_keys = ON')
          // Readers never wait for a writer, even one in another process. (Writers' waits for each other's
          // lock are the plugin's: `feathersQuery({ sqlite: { busyTimeout } })`.)
          connection.pragma('journal_mode = WAL')
          done(null)
        }
      }
    }
  }
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    const parsed = new URL(url)
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''))
    if (!database) throw new ConfigurationError(`DATABASE_URL ${redact(url)} names no database`)
    return {
      client: 'mysql2',
      connection: {
        host: parsed.hostname,
        port: parsed.port ? Number(parsed.port) : 3306,
        user: decodeURIComponent(parsed.username),
        password: decodeURIComponent(parsed.password),
        database,
        // DATETIME columns hold UTC; the driver must not shift them by the server's time zone.
        timezone: 'Z',
        charset: 'utf8mb4',
        supportBigNumbers: true,
        decimalNumbers: true,
        connectTimeout: 5000,
        // mysql2 gives each connection a cache of this many prepared statements, allocated in full when the
        // connection opens: four arrays of 16,000 slots by default, 512 KB of live heap per connection that
        // every full collection walks. knex sends text queries and never prepares one.
        maxPreparedStatements: 64
      },
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
