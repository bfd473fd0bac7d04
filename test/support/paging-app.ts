import type { HookContext } from '@feathersjs/feathers'
import { Type } from '@sinclair/typebox'
import knex, { type Knex } from 'knex'
import { knexConfig } from '../../example/database'
import { defineResource, FilterableField, IDField } from '../../src'
import { pluginApp } from './plugin-app'

/**
 * Resources for each GraphQL paging strategy:
 * - Board: OFFSET at the root; its cards as an OFFSET relation (`cards`), a plain list (`cardList`), keyset
 *   cursors (`cardsByKey`) and offset cursors (`cardsByOffset`). `cardCount` and `topCards` (cards ranked 2
 *   or more) are SQL-computed.
 * - Card: keyset cursors at the root; `rank` is nullable, for NULLs in the order; `secret` is filterOnly;
 *   `label` is SQL-computed (a concatenation). `authorize` hides cards of
 *   the `x-hide-board` board, so that cursors are seen to stay within it. Unpaged lists hold 10 at most.
 * - Label: NONE at the root, at most 4.
 */
export const boardResource = defineResource({
  name: 'Board',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    name: FilterableField(Type.String()),
    cardCount: FilterableField(Type.Integer()),
    topCards: FilterableField(Type.Integer())
  }),
  query: { enableTotalCount: true, defaultResultSize: 3, maxResultsSize: 10 },
  graphql: { pagingStrategy: 'offset' },
  many: {
    cards: { resource: 'Card', foreignKey: 'boardId', pagingStrategy: 'offset' },
    cardList: { resource: 'Card', foreignKey: 'boardId', pagingStrategy: 'none' },
    cardsByKey: { resource: 'Card', foreignKey: 'boardId', keyset: true },
    cardsByOffset: { resource: 'Card', foreignKey: 'boardId' }
  },
  sqlComputed: {
    cardCount: ({ knex: db, column }) =>
      db.raw('SELECT COUNT(*) FROM ?? WHERE ?? = ?', ['cards as counted', 'counted.boardId', column('id')]),
    // With a value bound by the expression itself, which statements compiled once per shape must keep.
    topCards: ({ knex: db, column }) =>
      db.raw('SELECT COUNT(*) FROM ?? WHERE ?? = ? AND ?? >= ?', [
        'cards as top',
        'top.boardId',
        column('id'),
        'top.rank',
        2
      ])
  }
})

export const cardResource = defineResource({
  name: 'Card',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    boardId: FilterableField(Type.Integer()),
    title: FilterableField(Type.String()),
    rank: FilterableField(Type.Integer(), { nullable: true }),
    due: FilterableField(Type.String({ format: 'date-time' }), { nullable: true }),
    secret: FilterableField(Type.String(), { nullable: true, filterOnly: true }),
    label: FilterableField(Type.String())
  }),
  sqlComputed: {
    // A concatenation, written per database: MySQL's || is OR.
    label: ({ knex: db, dialect, column }) =>
      dialect === 'mysql'
        ? db.raw("CONCAT(?, ' #', ?)", [column('title'), column('boardId')])
        : db.raw("? || ' #' || ?", [column('title'), column('boardId')])
  },
  query: { enableTotalCount: true, defaultResultSize: 3, maxResultsSize: 10 },
  graphql: { keyset: true },
  authorize: (context: HookContext) => {
    const hidden = context.params.headers?.['x-hide-board']
    return hidden ? { boardId: { neq: Number(hidden) } } : undefined
  }
})

export const labelResource = defineResource({
  name: 'Label',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    name: FilterableField(Type.String())
  }),
  query: { maxResultsSize: 4 },
  graphql: { pagingStrategy: 'none' }
})

/** An app over the paging resources, with `plugin` options (e.g. GraphQL limits). */
type PluginOptions = NonNullable<NonNullable<Parameters<typeof pluginApp>[2]>['plugin']>

export function pagingApp(plugin: PluginOptions = {}) {
  return (databaseUrl: string) => createPagingApp(databaseUrl, plugin)
}

export async function createPagingApp(databaseUrl: string, plugin: PluginOptions = {}) {
  const db: Knex = knex(knexConfig(databaseUrl))
  await db.schema.createTable('boards', (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  await db.schema.createTable('cards', (table) => {
    table.increments('id')
    table.integer('boardId').notNullable().index()
    table.string('title').notNullable()
    table.integer('rank').nullable()
    table.datetime('due', { precision: 3 }).nullable()
    table.string('secret').nullable()
  })
  await db.schema.createTable('labels', (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  return pluginApp(db, [boardResource, cardResource, labelResource], { plugin })
}
