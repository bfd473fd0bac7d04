import knex from 'knex'
import { randomBytes } from 'node:crypto'

/**
 * The databases the conformance suite runs on: SQLite always, MariaDB/MySQL when MYSQL_URL is set
 * (e.g. mysql://root@127.0.0.1:3306/test). Each MySQL use gets a fresh database, dropped afterwards.
 */
export type DatabaseName = 'sqlite' | 'mysql'

export const databaseNames: DatabaseName[] = process.env.MYSQL_URL ? ['sqlite', 'mysql'] : ['sqlite']

export interface TestDatabase {
  name: DatabaseName
  url: string
  drop(): Promise<void>
}

export async function createTestDatabase(name: DatabaseName): Promise<TestDatabase> {
  if (name === 'sqlite') return { name, url: 'sqlite::memory:', drop: async () => {} }
  const server = new URL(process.env.MYSQL_URL!)
  const database = `fq_test_${process.pid}_${randomBytes(4).toString('hex')}`
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
