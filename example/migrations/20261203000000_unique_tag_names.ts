import type { Knex } from 'knex'

/** Tags are upserted by name (`upsert: { key: ['name'] }`), which needs a unique index spanning it. */
export async function up(db: Knex) {
  await db.schema.alterTable('tags', (table) => table.unique(['name']))
}

export async function down(db: Knex) {
  await db.schema.alterTable('tags', (table) => table.dropUnique(['name']))
}
