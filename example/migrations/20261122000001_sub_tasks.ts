import type { Knex } from 'knex'
import { codePointString, portableTable } from './table-options'

export async function up(db: Knex) {
  await db.schema.createTable('sub_tasks', (table) => {
    portableTable(db, table)
    table.increments('id').primary()
    codePointString(db, table, 'title', 100).notNullable()
    codePointString(db, table, 'description', 1000).nullable()
    table.boolean('completed').notNullable().defaultTo(false)
    table.datetime('created', { precision: 3 }).notNullable()
    table.datetime('updated', { precision: 3 }).notNullable()
    table
      .integer('todoItemId')
      .unsigned()
      .notNullable()
      .references('id')
      .inTable('todo_items')
      .onDelete('CASCADE')
    codePointString(db, table, 'createdBy', 255).nullable()
    codePointString(db, table, 'updatedBy', 255).nullable()
    table.index(['todoItemId'])
  })
}

export async function down(db: Knex) {
  await db.schema.dropTable('sub_tasks')
}
