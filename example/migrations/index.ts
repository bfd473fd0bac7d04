import type { Knex } from 'knex'
import * as todoItems from './20261122000000_todo_items'
import * as subTasks from './20261122000001_sub_tasks'
import * as tags from './20261201000000_tags'
import * as todoItemTags from './20261201000001_todo_item_tags'
import * as noPadCollation from './20261202000000_no_pad_collation'
import * as uniqueTagNames from './20261203000000_unique_tag_names'

const migrations: Record<string, Knex.Migration> = {
  '20261122000000_todo_items': todoItems,
  '20261122000001_sub_tasks': subTasks,
  '20261201000000_tags': tags,
  '20261201000001_todo_item_tags': todoItemTags,
  '20261202000000_no_pad_collation': noPadCollation,
  '20261203000000_unique_tag_names': uniqueTagNames
}

/** Migrations imported, not looked up on disk, so they run the same from tsx, tests and bundles. */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]
}

export function migrateLatest(db: Knex) {
  return db.migrate.latest({ migrationSource })
}
