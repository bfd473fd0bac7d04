import type { Knex } from 'knex'
import { portableTable } from './table-options'

/**
 * The links of TodoItem.tags: one row per linked pair, at most one per pair. Deleting a todo item or a tag
 * deletes its links with it (ON DELETE CASCADE), whoever deletes it, so no link outlives either end. (A
 * soft-deleted record keeps its row and its links; reads leave out the soft-deleted end.)
 */
export async function up(db: Knex) {
  await db.schema.createTable('todo_item_tags', (table) => {
    portableTable(db, table)
    table.increments('id').primary()
    table
      .integer('todoItemId')
      .unsigned()
      .notNullable()
      .references('id')
      .inTable('todo_items')
      .onDelete('CASCADE')
    table.integer('tagId').unsigned().notNullable().references('id').inTable('tags').onDelete('CASCADE')
    // Also the index of a todo item's links; the tag's links have their own.
    table.unique(['todoItemId', 'tagId'])
    table.index(['tagId'])
  })
}

export async function down(db: Knex) {
  await db.schema.dropTable('todo_item_tags')
}
