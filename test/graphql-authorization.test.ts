import assert from 'node:assert/strict'
import { NotAuthenticated } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { knexConfig } from '../example/database'
import { defineResource, FilterableField, IDField } from '../src'
import { forEachDatabase } from './support/server'
import { codes, graphql } from './support/graphql'
import { pluginApp } from './support/plugin-app'

/** The caller is whoever the `x-user` header names; every record belongs to an owner. */
const caller = (context: HookContext) => context.params.headers?.['x-user'] as string | undefined

function requireCaller(context: HookContext) {
  if (!caller(context)) throw new NotAuthenticated('x-user header required')
}

const ownedBy = (context: HookContext) => ({ owner: { eq: caller(context) ?? '' } })

const folderResource = defineResource({
  name: 'Folder',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    owner: FilterableField(Type.String()),
    name: FilterableField(Type.String())
  }),
  read: { guards: [requireCaller] },
  authorize: ownedBy,
  many: { notes: { resource: 'Note', foreignKey: 'folderId' } }
})

const noteResource = defineResource({
  name: 'Note',
  schema: Type.Object({
    id: IDField(Type.Integer()),
    owner: FilterableField(Type.String()),
    text: FilterableField(Type.String()),
    // An integer foreign key (SubTask's is a string).
    folderId: FilterableField(Type.Integer())
  }),
  read: { guards: [requireCaller] },
  authorize: ownedBy,
  one: { folder: { resource: 'Folder', foreignKey: 'folderId' } }
})

async function createAuthorizationApp(databaseUrl: string) {
  const db = knex(knexConfig(databaseUrl))
  await db.schema.createTable('folders', (table) => {
    table.increments('id')
    table.string('owner').notNullable()
    table.string('name').notNullable()
  })
  await db.schema.createTable('notes', (table) => {
    table.increments('id')
    table.string('owner').notNullable()
    table.string('text').notNullable()
    table.integer('folderId').notNullable()
  })
  return pluginApp(db, [folderResource, noteResource])
}

forEachDatabase(
  'GraphQL: guards and authorize on every query and relation',
  (env) => {
    before(async () => {
      await env.server.db('folders').insert([
        { id: 1, owner: 'ann', name: 'ann-1' },
        { id: 2, owner: 'bob', name: 'bob-1' },
        { id: 3, owner: 'ann', name: 'ann-2' }
      ])
      await env.server.db('notes').insert([
        { id: 1, owner: 'ann', text: 'a1', folderId: 1 },
        { id: 2, owner: 'bob', text: 'b1', folderId: 1 },
        { id: 3, owner: 'ann', text: 'a2 in bob’s folder', folderId: 2 },
        { id: 4, owner: 'bob', text: 'b2', folderId: 2 },
        { id: 5, owner: 'ann', text: 'a3', folderId: 3 }
      ])
    })

    const as = (user: string) => ({ 'x-user': user })

    it('narrows collections and relation pages to what the caller may see', async () => {
      const response = await graphql(
        env.server,
        '{ folders { edges { node { name notes { edges { node { text } } } } } } }',
        undefined,
        as('ann')
      )
      assert.equal(response.errors, undefined, JSON.stringify(response.errors))
      assert.deepEqual(
        response.data.folders.edges.map((edge: any) => [
          edge.node.name,
          edge.node.notes.edges.map((e: any) => e.node.text)
        ]),
        [
          ['ann-1', ['a1']],
          ['ann-2', ['a3']]
        ]
      )
      const filtered = await graphql(
        env.server,
        '{ notes(filter: {owner: {eq: "bob"}}) { edges { cursor } } }',
        undefined,
        as('ann')
      )
      assert.deepEqual(filtered.data.notes.edges, [], 'no filter widens the scope')
    })

    it('resolves a one-relation the caller may not see as null, and a hidden record as NOT_FOUND', async () => {
      const response = await graphql(
        env.server,
        '{ notes { edges { node { text folderId folder { name } } } } hidden: folder(id: "2") { name } }',
        undefined,
        as('ann')
      )
      assert.deepEqual(
        response.data.notes.edges.map((edge: any) => edge.node),
        [
          { text: 'a1', folderId: 1, folder: { name: 'ann-1' } },
          { text: 'a2 in bob’s folder', folderId: 2, folder: null },
          { text: 'a3', folderId: 3, folder: { name: 'ann-2' } }
        ]
      )
      assert.equal(response.data.hidden, null)
      assert.deepEqual(codes(response), ['NOT_FOUND'])
      const own = await graphql(
        env.server,
        '{ folder(id: "2") { name notes { edges { node { text } } } } }',
        undefined,
        as('bob')
      )
      assert.deepEqual(own.data.folder, { name: 'bob-1', notes: { edges: [{ node: { text: 'b2' } }] } })
    })

    it('runs the guards: no caller, no data', async () => {
      const response = await graphql(env.server, '{ folders { edges { cursor } } folder(id: "1") { name } }')
      assert.deepEqual(codes(response), ['UNAUTHENTICATED', 'UNAUTHENTICATED'])
      assert.equal(response.data, null)
    })
  },
  createAuthorizationApp
)
