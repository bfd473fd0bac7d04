import knex from 'knex'
import { randomBytes } from 'node:crypto'

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
