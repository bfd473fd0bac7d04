import type { Knex } from 'knex'

const TABLES = ['todo_items', 'sub_tasks', 'tags', 'todo_item_tags']

/**
 * MySQL/MariaDB's `utf8mb4_bin` pads with spaces: `'' = ' '` and `'a' = 'a '` hold there and nowhere else. A
 * binary collation without padding makes equality, ranges and `in` compare strings as SQLite and PostgreSQL's
 * "C" do. MariaDB calls it `utf8mb4_nopad_bin`, MySQL 8 `utf8mb4_0900_bin`; MySQL 5.7 has none and keeps
 * padding.
 */
async function noPadCollation(db: Knex): Promise<string | undefined> {
  const [rows] = await db.raw('SELECT VERSION() AS version')
  const version = String((rows as Array<{ version: string }>)[0].version)
  if (/mariadb/i.test(version)) return 'utf8mb4_nopad_bin'
  return Number(version.split('.')[0]) >= 8 ? 'utf8mb4_0900_bin' : undefined
}

async function collate(db: Knex, collation: string) {
  for (const table of TABLES) {
    await db.raw(`ALTER TABLE ?? CONVERT TO CHARACTER SET utf8mb4 COLLATE ${collation}`, [table])
  }
}

export async function up(db: Knex) {
  if ((db.client as { dialect?: string }).dialect !== 'mysql') return
  const collation = await noPadCollation(db)
  if (collation) await collate(db, collation)
}

export async function down(db: Knex) {
  if ((db.client as { dialect?: string }).dialect !== 'mysql') return
  if (await noPadCollation(db)) await collate(db, 'utf8mb4_bin')
}
