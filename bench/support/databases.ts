import knex, { type Knex } from 'knex'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'

export interface BenchDatabase {
  name: 'sqlite' | 'mysql'
  url: string
  db: Knex
  drop(): Promise<void>
}

/** A fresh, migrated database for a benchmark: a temporary SQLite file, or a new MariaDB database. */
export async function benchDatabase(name: 'sqlite' | 'mysql'): Promise<BenchDatabase> {
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'fq-bench-'))
    const url = `sqlite:${join(dir, 'bench.sqlite')}`
    const db = knex(knexConfig(url))
    await migrateLatest(db)
    return {
      name,
      url,
      db,
      async drop() {
        await db.destroy()
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
  const server = new URL(process.env.MYSQL_URL!)
  const database = `fq_bench_${process.pid}`
  const admin = knex({ client: 'mysql2', connection: { ...knexConnection(server), database: undefined } })
  await admin.raw('DROP DATABASE IF EXISTS ??', [database])
  // The server's default character set and collation: the migrations must set what the API relies on.
  await admin.raw('CREATE DATABASE ??', [database])
  const url = new URL(server.toString())
  url.pathname = `/${database}`
  const db = knex(knexConfig(url.toString()))
  await migrateLatest(db)
  return {
    name,
    url: url.toString(),
    db,
    async drop() {
      await db.destroy()
      await admin.raw('DROP DATABASE IF EXISTS ??', [database])
      await admin.destroy()
    }
  }
}

function knexConnection(url: URL) {
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: undefined as string | undefined
  }
}

/** Seeds `count` todo items in one transaction, in multi-row inserts. */
export async function seedTodoItems(db: Knex, count: number, log: (message: string) => void = () => {}) {
  const sqlite = (db.client as { dialect?: string }).dialect === 'sqlite3'
  // Knex inserts many rows on SQLite as one compound SELECT, which SQLite caps at 500 terms.
  const chunk = sqlite ? 400 : 5000
  const base = Date.parse('2025-01-01T00:00:00.000Z')
  await db.transaction(async (trx) => {
    for (let start = 0; start < count; start += chunk) {
      const rows = []
      for (let index = start; index < Math.min(count, start + chunk); index++) {
        const created = new Date(base + index * 37_000)
        rows.push({
          title: `Todo item ${index}`,
          description: index % 4 === 0 ? null : `Description of item ${index}, with a comma`,
          completed: index % 3 === 0,
          created,
          updated: created,
          priority: index % 5,
          createdBy: index % 2 ? 'ann' : 'bob',
          updatedBy: null
        })
      }
      await trx('todo_items').insert(rows)
      if (start % 200_000 === 0 && start > 0) log(`  seeded ${start.toLocaleString()} rows`)
    }
  })
}

export function benchDatabaseNames(): Array<'sqlite' | 'mysql'> {
  return process.env.MYSQL_URL ? ['sqlite', 'mysql'] : ['sqlite']
}

/** Gives every todo item `perParent` sub tasks. */
export async function seedSubTasks(db: Knex, perParent: number) {
  const sqlite = (db.client as { dialect?: string }).dialect === 'sqlite3'
  const chunk = sqlite ? 400 : 5000
  const ids: number[] = (await db('todo_items').select('id').orderBy('id')).map((row) => Number(row.id))
  const created = new Date('2025-06-01T00:00:00.000Z')
  await db.transaction(async (trx) => {
    let rows: object[] = []
    for (const todoItemId of ids) {
      for (let index = 0; index < perParent; index++) {
        rows.push({ title: `Sub task ${index} of ${todoItemId}`, completed: index % 2 === 0, created, updated: created, todoItemId })
        if (rows.length === chunk) {
          await trx('sub_tasks').insert(rows)
          rows = []
        }
      }
    }
    if (rows.length) await trx('sub_tasks').insert(rows)
  })
}
