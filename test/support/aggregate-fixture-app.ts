import { NotAuthenticated } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { knexConfig } from '../../example/database'
import { defineResource, Field, FilterableField, IDField } from '../../src'
import { pluginApp } from './plugin-app'

/**
 * Resources for each aggregate switch, next to the example application (where everything is on):
 * - Library: `enableAggregate: true`, so its root query and its `books` relation; `archive` opts out.
 * - Book: `aggregate: {enabled: true}`, the root query only (not `reviews`); scoped by an `x-tenant` guard
 *   and `authorize`, a defaultFilter and soft delete, which relation aggregates of Library honour too.
 * - Review: no switch, no aggregates.
 * - Tag: string id and no numbers, so its response has no sum or avg.
 * - Entry: a `filterRequired` field, so its aggregate filter is required.
 */
const tenantOf = (context: HookContext) => context.params.headers?.['x-tenant'] as string | undefined

export const libraryResource = defineResource({
  name: 'Library',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    name: FilterableField(Type.String())
  }),
  many: {
    books: { resource: 'Book', foreignKey: 'libraryId' },
    archive: { resource: 'Book', foreignKey: 'libraryId', enableAggregate: false }
  },
  enableAggregate: true
})

export const bookResource = defineResource({
  name: 'Book',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    libraryId: FilterableField(Type.Integer()),
    title: FilterableField(Type.String()),
    pages: FilterableField(Type.Integer(), { nullable: true }),
    price: FilterableField(Type.Number()),
    published: FilterableField(Type.String({ format: 'date-time' }), { nullable: true }),
    available: FilterableField(Type.Boolean()),
    tenant: FilterableField(Type.String(), { filterOnly: true }),
    shelf: Field(Type.String(), { nullable: true, groupBy: true })
  }),
  read: {
    guards: [
      (context: HookContext) => {
        if (!tenantOf(context)) throw new NotAuthenticated('x-tenant header required')
      }
    ]
  },
  authorize: (context) => ({ tenant: { eq: tenantOf(context) ?? '' } }),
  query: { defaultFilter: { available: { is: true } } },
  delete: { useSoftDelete: true },
  many: { reviews: { resource: 'Review', foreignKey: 'bookId' } },
  aggregate: { enabled: true }
})

export const reviewResource = defineResource({
  name: 'Review',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    bookId: FilterableField(Type.Integer()),
    stars: FilterableField(Type.Integer())
  })
})

export const tagResource = defineResource({
  name: 'Tag',
  schema: Type.Object({
    id: IDField(Type.String()),
    label: FilterableField(Type.String()),
    pinned: FilterableField(Type.Boolean())
  }),
  enableAggregate: true
})

export const entryResource = defineResource({
  name: 'Entry',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    account: FilterableField(Type.String(), { filterRequired: true }),
    amount: FilterableField(Type.Number())
  }),
  enableAggregate: true
})

export const aggregateFixtureResources = [
  libraryResource,
  bookResource,
  reviewResource,
  tagResource,
  entryResource
]

/** The fixture's tables with `resources` (its own unless a test varies them) and `plugin` options. */
export async function createAggregateFixtureApp(
  databaseUrl: string,
  resources: Parameters<typeof pluginApp>[1] = aggregateFixtureResources,
  plugin: NonNullable<Parameters<typeof pluginApp>[2]>['plugin'] = {}
) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('libraries', (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  await db.schema.createTable('books', (table) => {
    table.increments('id')
    table.integer('libraryId').notNullable()
    table.string('title').notNullable()
    table.integer('pages').nullable()
    table.double('price').notNullable()
    table.datetime('published', { precision: 3 }).nullable()
    table.boolean('available').notNullable()
    table.string('tenant').notNullable()
    table.string('shelf').nullable()
    table.datetime('deletedAt', { precision: 3 }).nullable()
  })
  await db.schema.createTable('reviews', (table) => {
    table.increments('id')
    table.integer('bookId').notNullable()
    table.integer('stars').notNullable()
  })
  await db.schema.createTable('tags', (table) => {
    table.string('id', 64).primary()
    table.string('label').notNullable()
    table.boolean('pinned').notNullable()
  })
  await db.schema.createTable('entries', (table) => {
    table.increments('id')
    table.string('account').notNullable()
    table.double('amount').notNullable()
  })
  return pluginApp(db, resources, { plugin })
}
