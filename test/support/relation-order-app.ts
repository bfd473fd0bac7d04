import type { HookContext } from '@feathersjs/feathers'
import { feathers } from '@feathersjs/feathers'
import { bodyParser, koa, rest } from '@feathersjs/koa'
import { Type } from '@sinclair/typebox'
import knex, { type Knex } from 'knex'
import {
  defineResource,
  errorHandler,
  feathersQuery,
  Field,
  FilterableField,
  IDField,
  type Filter
} from '../../src'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { todoItemResource, todoItemSchema } from '../../example/resources/todo-item'
import { subTaskResource, subTaskSchema } from '../../example/resources/sub-task'
import { tagResource } from '../../example/resources/tag'
import { todoItemTagResource } from '../../example/resources/todo-item-tag'
import type { AppFactory } from './server'

/** Non-admins (without `x-role: admin`) may not read records whose `field` starts with "secret". */
const secretFor =
  (field: string) =>
  (context: HookContext): Filter | undefined =>
    context.params.headers?.['x-role'] === 'admin' ? undefined : { [field]: { notLike: 'secret%' } }

/**
 * People own todo items: names groupable and sortable, a hidden badge, a nickname nobody may filter by, and
 * a mentor (another person), so that relation paths can go deeper than the limit.
 */
const personResource = defineResource({
  name: 'Person',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    name: FilterableField(Type.String()),
    joined: FilterableField(Type.String({ format: 'date-time' })),
    badge: Field(Type.String(), { nullable: true, hidden: true, groupBy: true }),
    nickname: Field(Type.String(), { nullable: true }),
    mentorId: FilterableField(Type.Integer(), { nullable: true })
  }),
  one: { mentor: { resource: 'Person', foreignKey: 'mentorId', filterable: true } },
  table: 'people',
  basePath: 'people',
  authorize: secretFor('name'),
  delete: { useSoftDelete: true },
  enableAggregate: true
})

/**
 * The example's todo items, sub-tasks and tags, with a chain of to-one relations to group and sort by
 * (sub-task → todo item → owner), sub-tasks with points to sum, and on every level an `authorize` that hides
 * records named "secret..." from non-admins and soft delete.
 */
export const relationOrderApp: AppFactory = async (databaseUrl) => {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  await db.schema.createTable('people', (table) => {
    table.increments('id')
    table.string('name').notNullable()
    table.datetime('joined', { precision: 3 }).notNullable()
    table.string('badge').nullable()
    table.string('nickname').nullable()
    table.integer('mentorId').nullable()
    table.datetime('deletedAt', { precision: 3 }).nullable()
  })
  await db.schema.alterTable('todo_items', (table) => {
    table.integer('ownerId').nullable()
    table.datetime('deletedAt', { precision: 3 }).nullable()
  })
  await db.schema.alterTable('tags', (table) => {
    table.datetime('deletedAt', { precision: 3 }).nullable()
  })
  await db.schema.alterTable('sub_tasks', (table) => {
    table.integer('points').nullable()
    table.datetime('deletedAt', { precision: 3 }).nullable()
  })
  // Feathers' REST transport first, for Feathers clients (their `aggregate` is a custom method's POST).
  const app = koa(feathers())
  app.use(errorHandler(() => {}))
  app.use(bodyParser())
  app.configure(rest())
  const resources = [
    personResource,
    defineResource({
      ...todoItemResource,
      schema: Type.Object({
        ...todoItemSchema.properties,
        ownerId: FilterableField(Type.Integer(), { nullable: true })
      }),
      authorize: secretFor('title'),
      delete: { useSoftDelete: true },
      one: { owner: { resource: 'Person', foreignKey: 'ownerId', filterable: true } },
      many: {
        subTasks: todoItemResource.many!.subTasks,
        // Keyset cursors carry the sort values: a sort by related records is refused there. Not filterable:
        // not aggregated for sorting either.
        subTasksByKey: { resource: 'SubTask', foreignKey: 'todoItemId', keyset: true },
        tags: todoItemResource.many!.tags
      }
    }),
    defineResource({
      ...subTaskResource,
      schema: Type.Object({
        ...subTaskSchema.properties,
        points: FilterableField(Type.Integer(), { nullable: true })
      }),
      authorize: secretFor('title'),
      delete: { useSoftDelete: true }
    }),
    defineResource({ ...tagResource, authorize: secretFor('name'), delete: { useSoftDelete: true } }),
    todoItemTagResource
  ]
  app.configure(feathersQuery({ Model: db, resources }))
  return { app, db }
}

export interface PersonRow {
  id: number
  name: string
  joined: string
  badge?: string | null
  mentorId?: number | null
  deletedAt?: string | null
}

export interface ItemRow {
  id: number
  title: string
  completed: boolean
  priority: number
  ownerId: number | null
  deletedAt?: string | null
}

export interface TagRow {
  id: number
  name: string
  deletedAt?: string | null
}

export interface SubTaskRow {
  id: number
  todoItemId: number
  title: string
  completed: boolean
  points: number | null
  deletedAt?: string | null
}

/** Inserts the rows as they are (ids included) and moves PostgreSQL's sequences past them. */
export async function seedRelationOrder(
  db: Knex,
  rows: {
    people: PersonRow[]
    items: ItemRow[]
    subTasks: SubTaskRow[]
    tags: TagRow[]
    /** `[todoItemId, tagId]` pairs. */
    links: Array<[number, number]>
  }
) {
  const at = (iso: string | null | undefined) => (iso ? new Date(iso) : null)
  const created = new Date('2026-01-01T00:00:00.000Z')
  await db('people').insert(
    rows.people.map((person) => ({
      ...person,
      joined: at(person.joined),
      badge: person.badge ?? null,
      mentorId: person.mentorId ?? null,
      deletedAt: at(person.deletedAt)
    }))
  )
  await db('todo_items').insert(
    rows.items.map((item) => ({ ...item, created, updated: created, deletedAt: at(item.deletedAt) }))
  )
  await db('sub_tasks').insert(
    rows.subTasks.map((task) => ({ ...task, created, updated: created, deletedAt: at(task.deletedAt) }))
  )
  await db('tags').insert(
    rows.tags.map((tag) => ({ ...tag, created, updated: created, deletedAt: at(tag.deletedAt) }))
  )
  await db('todo_item_tags').insert(rows.links.map(([todoItemId, tagId]) => ({ todoItemId, tagId })))
}
