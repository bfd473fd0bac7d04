import knex from 'knex'
import { randomBytes } from 'node:crypto'
import { driversFromEnvironment } from '../../example/database'

/**
 * The databases the conformance suite runs on: SQLite always, MariaDB/MySQL when MYSQL_URL is set
 * (e.g. mysql://root@127.0.0.1:3306/test), PostgreSQL when PG_URL is set (e.g.
 * postgres://postgres@127.0.0.1:5432/test). Each MySQL or PostgreSQL use gets a fresh database, dropped
 * afterwards.
 */
export type DatabaseName = 'sqlite' | 'mysql' | 'postgres'

export const databaseNames: DatabaseName[] = [
  'sqlite' as const,
  ...(process.env.MYSQL_URL ? ['mysql' as const] : []),
  ...(process.env.PG_URL ? ['postgres' as const] : [])
]

/**
 * The knex client each database runs on: better-sqlite3 and mysql2, or with SQLITE_DRIVER=sqlite3 and
 * MYSQL_DRIVER=mysql the drivers of apps the Feathers CLI makes (`npm run test:drivers`). Every app the
 * tests make from a database URL uses them (`knexConfig` in example/database.ts reads the same variables).
 */
export const drivers = driversFromEnvironment()

const DEFAULT_DRIVERS = driversFromEnvironment({})

/** The database, and its driver where it is not the default: what suite titles say, e.g. `sqlite on sqlite3`. */
export function databaseLabel(name: DatabaseName) {
  if (name === 'sqlite' && drivers.sqlite !== DEFAULT_DRIVERS.sqlite) return `sqlite on ${drivers.sqlite}`
  if (name === 'mysql' && drivers.mysql !== DEFAULT_DRIVERS.mysql) return `mysql on ${drivers.mysql}`
  return name
}

/** Whether the database's driver runs statements on the event loop (better-sqlite3), one at a time. */
export const readsSynchronously = (name: DatabaseName) =>
  name === 'sqlite' && drivers.sqlite === 'better-sqlite3'

if (drivers.sqlite !== DEFAULT_DRIVERS.sqlite || drivers.mysql !== DEFAULT_DRIVERS.mysql) {
  console.log(`Drivers: SQLite on ${drivers.sqlite}, MySQL on ${drivers.mysql}`)
}

export interface TestDatabase {
  name: DatabaseName
  url: string
  drop(): Promise<void>
}

export async function createTestDatabase(name: DatabaseName): Promise<TestDatabase> {
  if (name === 'sqlite') return { name, url: 'sqlite::memory:', drop: async () => {} }
  if (name === 'postgres') return createPostgresDatabase()
  const server = new URL(process.env.MYSQL_URL!)
  const database = freshName()
  const admin = knex({
    client: 'mysql2',
    connection: {
      host: server.hostname,
      port: Number(server.port || 3306),
      user: decodeURIComponent(server.username),
      password: decodeURIComponent(server.password)
    }
  })
  // The server's default character set and collation: the migrations must set what the API relies on.
  await admin.raw('CREATE DATABASE ??', [database])
  await admin.destroy()
  const url = new URL(server.toString())
  url.pathname = `/${database}`
  return {
    name,
    url: url.toString(),
    async drop() {
      const dropper = knex({ client: 'mysql2', connection: url.toString().replace(`/${database}`, '/') })
      await dropper.raw('DROP DATABASE IF EXISTS ??', [database])
      await dropper.destroy()
    }
  }
}

function freshName() {
  return `fq_test_${process.pid}_${randomBytes(4).toString('hex')}`
}

/**
 * A database created from PG_URL's: UTF-8 with the "C" collation, so that equality, LIKE and ORDER BY compare
 * code points as SQLite does and the MySQL tables' binary collation does.
 */
async function createPostgresDatabase(): Promise<TestDatabase> {
  const server = process.env.PG_URL!
  const database = freshName()
  const admin = () => knex({ client: 'pg', connection: server, pool: { min: 0, max: 1 } })
  const creator = admin()
  await creator.raw("CREATE DATABASE ?? TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'", [
    database
  ])
  await creator.destroy()
  const url = new URL(server)
  url.pathname = `/${database}`
  return {
    name: 'postgres',
    url: url.toString(),
    async drop() {
      const dropper = admin()
      // WITH (FORCE) ends connections a test left open (a server process killed mid-test).
      await dropper.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [database])
      await dropper.destroy()
    }
  }
}
