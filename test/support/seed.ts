import type { Knex } from 'knex'

export interface TodoSeed {
  title: string
  description?: string | null
  completed?: boolean
  priority?: number
  created?: string
  createdBy?: string | null
}

/**
 * Rows per multi-row INSERT: knex inserts many rows on SQLite as one compound SELECT, which SQLite caps at 500
 * terms; other databases take `wanted`.
 */
export function rowsPerInsert(db: Knex, wanted = 500) {
  const sqlite = (db.client as { dialect?: string }).dialect === 'sqlite3'
  return sqlite ? Math.min(wanted, 400) : wanted
}

/** Inserts todo items straight into the table (bulk, fast) and returns their ids in order. */
export async function seedTodoItems(db: Knex, items: TodoSeed[], chunk = 500): Promise<number[]> {
  const base = Date.parse('2026-01-01T00:00:00.000Z')
  const rows = items.map((item, index) => {
    const created = item.created ? new Date(item.created) : new Date(base + index * 1000)
    return {
      title: item.title,
      description: item.description ?? null,
      completed: item.completed ?? false,
      priority: item.priority ?? 0,
      created,
      updated: created,
      createdBy: item.createdBy ?? null,
      updatedBy: item.createdBy ?? null
    }
  })
  await db.batchInsert('todo_items', rows, rowsPerInsert(db, chunk))
  const ids = await db('todo_items').select('id').orderBy('id', 'desc').limit(items.length)
  return ids.map((row) => Number(row.id)).reverse()
}

/** `count` todo items titled and described by their number. */
export function numberedItems(count: number): TodoSeed[] {
  return Array.from({ length: count }, (_, index) => ({
    title: `Item ${index}`,
    description: `Description of item ${index}`
  }))
}

export async function clearTables(db: Knex) {
  await db('todo_item_tags').delete()
  await db('sub_tasks').delete()
  await db('todo_items').delete()
  await db('tags').delete()
}

/**
 * After rows were inserted with explicit ids: moves PostgreSQL's id sequences past them, as SQLite and MySQL
 * do by themselves, so that the next create does not collide with them.
 */
export async function advanceIdSequences(db: Knex, tables: string[]) {
  if ((db.client as { dialect?: string }).dialect !== 'postgresql') return
  for (const table of tables) {
    await db.raw(
      `SELECT setval(pg_get_serial_sequence(?, 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM ??), false)`,
      [table, table]
    )
  }
}

export interface SubTaskSeed {
  todoItemId: number
  title: string
  description?: string | null
  completed?: boolean
  created?: string
}

/** Inserts sub-tasks straight into the table and returns their ids in order. */
export async function seedSubTasks(db: Knex, items: SubTaskSeed[]): Promise<number[]> {
  const base = Date.parse('2026-02-01T00:00:00.000Z')
  const rows = items.map((item, index) => {
    const created = item.created ? new Date(item.created) : new Date(base + index * 1000)
    return {
      todoItemId: item.todoItemId,
      title: item.title,
      description: item.description ?? null,
      completed: item.completed ?? false,
      created,
      updated: created
    }
  })
  await db.batchInsert('sub_tasks', rows, rowsPerInsert(db))
  const ids = await db('sub_tasks').select('id').orderBy('id', 'desc').limit(items.length)
  return ids.map((row) => Number(row.id)).reverse()
}

/** Inserts tags straight into the table and returns their ids in order. */
export async function seedTags(db: Knex, names: string[]): Promise<number[]> {
  const base = Date.parse('2026-03-01T00:00:00.000Z')
  const rows = names.map((name, index) => {
    const created = new Date(base + index * 1000)
    return { name, created, updated: created }
  })
  await db.batchInsert('tags', rows, rowsPerInsert(db))
  const ids = await db('tags').select('id').orderBy('id', 'desc').limit(names.length)
  return ids.map((row) => Number(row.id)).reverse()
}

/** Links todo items and tags: `[todoItemId, tagId]` pairs. */
export async function seedLinks(db: Knex, pairs: Array<[number, number]>) {
  const rows = pairs.map(([todoItemId, tagId]) => ({ todoItemId, tagId }))
  await db.batchInsert('todo_item_tags', rows, rowsPerInsert(db))
}
