import type { Knex } from 'knex'
import { codePointString, portableTable } from './table-options'

export async function up(db: Knex) {
  await db.schema.createTable('tags', (table) => {
    portableTable(db, table)
    table.increments('id').primary()
    codePointString(db, table, 'name', 100).notNullable()
    table.datetime('created', { precision: 3 }).notNullable()
    table.datetime('updated', { precision: 3 }).notNullable()
    codePointString(db, table, 'createdBy', 255).nullable()
    codePointString(db, table, 'updatedBy', 255).nullable()
  })
}

export async function down(db: Knex) {
  await db.schema.dropTable('tags')
}
