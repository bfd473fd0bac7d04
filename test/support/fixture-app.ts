import { Forbidden } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import { Type } from '@sinclair/typebox'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../../example/database'
import { FilterableField, Field, IDField, defineResource, searchFields } from '../../src'
import { pluginApp } from './plugin-app'

/**
 * Resources that exercise every option of the resource model through the public plugin API,
 * next to the example application's TodoItem and SubTask.
 */
export const widgetResource = defineResource({
  name: 'Widget',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    tenant: FilterableField(Type.String(), { filterRequired: true }),
    secret: FilterableField(Type.String(), { filterOnly: true }),
    name: FilterableField(Type.String()),
    rank: FilterableField(Type.Integer(), { nullable: true }),
    weight: FilterableField(Type.Number({ default: 1 })),
    released: FilterableField(Type.String({ format: 'date-time' }), { nullable: true })
  }),
  query: {
    defaultSort: [{ field: 'rank', direction: 'DESC' }],
    defaultResultSize: 2,
    maxResultsSize: 3
  },
  create: { disabled: true },
  update: {
    one: {
      path: ':id/rename',
      description: 'Rename a widget',
      guards: [
        (context: HookContext) => {
          if (context.params.headers?.['x-allow'] !== 'yes') throw new Forbidden('x-allow header required')
        }
      ]
    }
  },
  delete: { useSoftDelete: true, one: { path: ':id/archive' } }
})

export const gadgetResource = defineResource({
  name: 'Gadget',
  schema: Type.Object({
    id: IDField(Type.String({ minLength: 1 })),
    name: FilterableField(Type.String()),
    active: FilterableField(Type.Boolean()),
    note: Field(Type.String(), { nullable: true })
  }),
  query: {
    pagingStrategy: 'none',
    defaultFilter: { active: { is: true } },
    disableFilter: true,
    enableSearch: true
  },
  create: {
    schema: Type.Object({ id: Type.String({ minLength: 1 }), name: Type.String(), active: Type.Boolean() })
  },
  update: { schema: Type.Object({ active: Type.Optional(Type.Boolean()) }, { additionalProperties: false }) },
  export: { maxRows: 2 }
})

/** The widgets the option tests start from: tenant a has four, tenant b one; ranks tie and one is null. */
const WIDGET_ROWS = [
  {
    id: 1,
    tenant: 'a',
    secret: 's1',
    name: 'w1',
    rank: 2,
    weight: 1.5,
    released: new Date('2026-03-01T10:00:00Z')
  },
  { id: 2, tenant: 'a', secret: 's2', name: 'w2', rank: null, weight: 2, released: null },
  { id: 3, tenant: 'a', secret: 's1', name: 'w3', rank: 5, weight: 1, released: null },
  { id: 4, tenant: 'b', secret: 's1', name: 'w4', rank: 2, weight: 1, released: null },
  { id: 5, tenant: 'a', secret: 's3', name: 'w5', rank: 2, weight: 3, released: null }
]

/** Replaces the widgets with WIDGET_ROWS, each changed by `changes[id]` where a test needs other values. */
export async function seedWidgets(
  db: Knex,
  changes: Record<number, Partial<(typeof WIDGET_ROWS)[number]>> = {}
) {
  await db('widgets').delete()
  await db('widgets').insert(WIDGET_ROWS.map((row) => ({ ...row, ...changes[row.id] })))
}

export async function createFixtureApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('widgets', (table) => {
    table.increments('id')
    table.string('tenant').notNullable()
    table.string('secret').notNullable()
    table.string('name').notNullable()
    table.integer('rank').nullable()
    table.double('weight').notNullable()
    table.datetime('released', { precision: 3 }).nullable()
    table.datetime('deletedAt', { precision: 3 }).nullable()
  })
  await db.schema.createTable('gadgets', (table) => {
    table.string('id', 64).primary()
    table.string('name').notNullable()
    table.boolean('active').notNullable()
    table.string('note').nullable()
  })
  const { app } = pluginApp(db, [widgetResource, gadgetResource])
  app.service('gadgets').hooks({ before: { find: [searchFields(['name'], { maxWords: 2, maxLength: 12 })] } })
  return { app, db }
}
