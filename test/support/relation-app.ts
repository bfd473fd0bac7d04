import { Forbidden } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import knex from 'knex'
import { defineResource, type Filter } from '../../src'
import { knexConfig } from '../../example/database'
import { migrateLatest } from '../../example/migrations'
import { todoItemResource } from '../../example/resources/todo-item'
import { subTaskResource } from '../../example/resources/sub-task'
import { tagResource } from '../../example/resources/tag'
import { todoItemTagResource } from '../../example/resources/todo-item-tag'
import type { AppFactory } from './server'
import { pluginApp } from './plugin-app'

const header = (context: HookContext, name: string) => context.params.headers?.[name] as string | undefined

/** Records whose `field` starts with "secret" are for admins (`x-role: admin`) only. */
const secretFor =
  (field: string) =>
  (context: HookContext): Filter | undefined =>
    header(context, 'x-role') === 'admin' ? undefined : { [field]: { notLike: 'secret%' } }

/**
 * The example's resources with access rules and soft delete on the related side: sub-tasks and tags titled or
 * named `secret...` are hidden from non-admins, links to the tag named in `x-hidden-tag` are hidden, reading
 * tags is forbidden with `x-no-tags`, and sub-tasks, tags and links are soft-deleted. Tag.todoItems is not
 * filterable (relations are not unless declared).
 */
export const relationApp: AppFactory = (databaseUrl) => createRelationApp(databaseUrl)

/** The same with Feathers' REST and socket.io transports, for Feathers clients. */
export const relationAppWithTransports: AppFactory = (databaseUrl) =>
  createRelationApp(databaseUrl, { transports: true })

async function createRelationApp(databaseUrl: string, options: { transports?: boolean } = {}) {
  const db = knex(knexConfig(databaseUrl))
  await migrateLatest(db)
  for (const table of ['sub_tasks', 'tags', 'todo_item_tags']) {
    await db.schema.alterTable(table, (builder) => builder.datetime('deletedAt', { precision: 3 }).nullable())
  }
  const tagName = async (context: HookContext) => header(context, 'x-hidden-tag')
  return pluginApp(
    db,
    [
      todoItemResource,
      defineResource({ ...subTaskResource, authorize: secretFor('title'), delete: { useSoftDelete: true } }),
      defineResource({
        ...tagResource,
        authorize: secretFor('name'),
        delete: { useSoftDelete: true },
        read: {
          guards: [
            (context: HookContext) => {
              if (header(context, 'x-no-tags')) throw new Forbidden('No tags for you')
            }
          ]
        },
        many: { todoItems: { ...tagResource.many!.todoItems, filterable: false } }
      }),
      defineResource({
        ...todoItemTagResource,
        delete: { useSoftDelete: true },
        async authorize(context) {
          const hidden = await tagName(context)
          return hidden ? { tag: { name: { neq: hidden } } } : undefined
        }
      })
    ],
    options
  )
}
