import knex, { type Knex } from 'knex'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { createTestDatabase } from '../../test/support/databases'
import { rowsPerInsert } from '../../test/support/seed'

export type BenchDatabaseName = 'sqlite' | 'mysql' | 'postgres'

export interface BenchDatabase {
  name: BenchDatabaseName
  url: string
  db: Knex
  drop(): Promise<void>
}

/**
 * A fresh, migrated database for a benchmark: a temporary SQLite file, or a new MariaDB (MYSQL_URL) or
 * PostgreSQL (PG_URL) database.
 */
export async function benchDatabase(name: BenchDatabaseName): Promise<BenchDatabase> {
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
  const database = await createTestDatabase(name)
  const db = knex(knexConfig(database.url))
  await migrateLatest(db)
  return {
    name,
    url: database.url,
    db,
    async drop() {
      await db.destroy()
      await database.drop()
    }
  }
}

/**
 * Seeds `count` todo items in one transaction, in multi-row inserts, created 37 s apart or, with `spanDays`,
 * spread evenly over that many days.
 */
export async function seedTodoItems(
  db: Knex,
  count: number,
  options: { log?: (message: string) => void; spanDays?: number } = {}
) {
  const { log = () => {}, spanDays } = options
  const chunk = rowsPerInsert(db, 5000)
  const base = Date.parse('2025-01-01T00:00:00.000Z')
  const spacing = spanDays ? Math.floor((spanDays * 86_400_000) / count) : 37_000
  await db.transaction(async (trx) => {
    for (let start = 0; start < count; start += chunk) {
      const rows = []
      for (let index = start; index < Math.min(count, start + chunk); index++) {
        const created = new Date(base + index * spacing)
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

/** SQLite, and MariaDB and PostgreSQL when their URLs are set; BENCH_DATABASES=postgres,... picks some. */
export function benchDatabaseNames(): BenchDatabaseName[] {
  const names: BenchDatabaseName[] = [
    'sqlite' as const,
    ...(process.env.MYSQL_URL ? ['mysql' as const] : []),
    ...(process.env.PG_URL ? ['postgres' as const] : [])
  ]
  const picked = process.env.BENCH_DATABASES?.split(',').map((name) => name.trim())
  if (!picked) return names
  // A misspelt name would otherwise leave a database out in silence, or every one (an empty table).
  const unknown = picked.filter((name) => !['sqlite', 'mysql', 'postgres'].includes(name))
  if (unknown.length) {
    throw new Error(`BENCH_DATABASES: unknown ${unknown.join(', ')}; use sqlite, mysql, postgres`)
  }
  const unset = picked.filter((name) => !names.includes(name as BenchDatabaseName))
  if (unset.length) {
    throw new Error(`BENCH_DATABASES names ${unset.join(', ')}, whose URL (MYSQL_URL, PG_URL) is not set`)
  }
  return names.filter((name) => picked.includes(name))
}

/** Gives every todo item `perParent` sub tasks. */
export async function seedSubTasks(db: Knex, perParent: number) {
  const chunk = rowsPerInsert(db, 5000)
  const ids: number[] = (await db('todo_items').select('id').orderBy('id')).map((row) => Number(row.id))
  const created = new Date('2025-06-01T00:00:00.000Z')
  await db.transaction(async (trx) => {
    let rows: object[] = []
    for (const todoItemId of ids) {
      for (let index = 0; index < perParent; index++) {
        rows.push({
          title: `Sub task ${index} of ${todoItemId}`,
          completed: index % 2 === 0,
          created,
          updated: created,
          todoItemId
        })
        if (rows.length === chunk) {
          await trx('sub_tasks').insert(rows)
          rows = []
        }
      }
    }
    if (rows.length) await trx('sub_tasks').insert(rows)
  })
}
