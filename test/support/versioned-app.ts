import { Type } from '@sinclair/typebox'
import knex from 'knex'
import type { HookContext } from '@feathersjs/feathers'
import { defineResource, FilterableField, IDField, type Filter } from '../../src'
import { knexConfig } from '../../example/database'
import { pluginApp } from './plugin-app'

const schema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  title: FilterableField(Type.Optional(Type.String())),
  owner: FilterableField(Type.String()),
  version: FilterableField(Type.Integer({ readOnly: true }))
})

/** Callers see the records of the `x-owner` they name; internal calls see all. */
const byOwner = (context: HookContext): Filter | undefined => {
  const owner = context.params.headers?.['x-owner']
  return typeof owner === 'string' ? { owner: { eq: owner } } : undefined
}

/**
 * Versioned resources in the forms a write can take: `pages` replaced by PUT (`update.replace`), `drafts`
 * soft deleted, `cards` several at once (`multi`); each scoped to its `x-owner`, Feathers transports on.
 */
export async function versionedApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  for (const table of ['pages', 'drafts', 'cards']) {
    await db.schema.createTable(table, (columns) => {
      columns.increments('id')
      columns.string('title').nullable()
      columns.string('owner').notNullable()
      columns.integer('version').notNullable()
      if (table === 'drafts') columns.timestamp('deleted_at').nullable()
    })
  }
  const versioned = { schema, authorize: byOwner, concurrency: { version: 'version' } }
  return pluginApp(
    db,
    [
      defineResource({ ...versioned, name: 'Page', update: { replace: true } }),
      defineResource({
        ...versioned,
        name: 'Draft',
        delete: { useSoftDelete: true, softDeleteColumn: 'deleted_at' }
      }),
      defineResource({ ...versioned, name: 'Card', multi: true })
    ],
    { transports: true }
  )
}
