import { authenticate } from '@feathersjs/authentication'
import { BadRequest, NotAuthenticated } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import { Type } from '@sinclair/typebox'
import knex from 'knex'
import { knexConfig } from '../../example/database'
import {
  defineResource,
  feathersQuery,
  Field,
  FilterableField,
  IDField,
  type GraphqlOptions
} from '../../src'
import { jwtApp, useJwtAuthentication, type User } from './auth-app'

/**
 * Resources written to through GraphQL mutations and watched through subscriptions: everyone signs in with a
 * JWT (`authenticate('jwt')` as a guard), sees and changes only their own records (`authorize` on a hidden
 * owner set by a hook), and may change up to 5 records per call (`multi`, `maxMulti`).
 */
const ownRecords = (context: HookContext) => {
  const user = context.params.user as User | undefined
  if (!user) throw new NotAuthenticated('Sign in first')
  return { owner: { eq: user.id } }
}

export const MUTATION_MAX_MULTI = 5

export const folderResource = defineResource({
  name: 'Folder',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    name: FilterableField(Type.String({ minLength: 1 })),
    rank: FilterableField(Type.Integer({ minimum: 0, default: 0 })),
    owner: Field(Type.String(), { hidden: true })
  }),
  guards: [authenticate('jwt')],
  authorize: ownRecords,
  multi: true,
  maxMulti: MUTATION_MAX_MULTI,
  many: { notes: { resource: 'Note', foreignKey: 'folderId' } }
})

export const noteResource = defineResource({
  name: 'Note',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    text: FilterableField(Type.String()),
    folderId: FilterableField(Type.Integer(), { nullable: true }),
    owner: Field(Type.String(), { hidden: true })
  }),
  guards: [authenticate('jwt')],
  authorize: ownRecords,
  multi: true,
  maxMulti: MUTATION_MAX_MULTI,
  one: { folder: { resource: 'Folder', foreignKey: 'folderId', nullable: true } }
})

/** No create endpoint, a custom update body, soft delete, and a guard on delete only; no multi. */
export const labelResource = defineResource({
  name: 'Label',
  schema: Type.Object({
    id: IDField(Type.Integer({ readOnly: true })),
    name: FilterableField(Type.String()),
    color: FilterableField(Type.String())
  }),
  create: { disabled: true },
  update: { schema: Type.Object({ color: Type.Optional(Type.String()) }) },
  delete: {
    useSoftDelete: true,
    one: {
      guards: [
        (context: HookContext) => {
          if (context.params.headers?.['x-may-delete'] !== 'yes')
            throw new BadRequest('x-may-delete header required')
        }
      ]
    }
  }
})

const stampOwner = (context: HookContext) => {
  const owner = (context.params.user as User).id
  const stamp = (record: object) => ({ ...record, owner })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
}

/** Fails the call after its write when the request asks for it: the write must be undone. */
const failAfterWriteOnRequest = (context: HookContext) => {
  if (context.params.headers?.['x-fail-after'] === 'yes') throw new BadRequest('Refused after the write')
}

export function mutationAppFactory(graphql: GraphqlOptions = {}) {
  return async (databaseUrl: string) => {
    const db = knex(knexConfig(databaseUrl))
    await db.schema.createTable('folders', (table) => {
      table.increments('id')
      table.text('name').notNullable()
      table.integer('rank').notNullable()
      table.string('owner').notNullable()
    })
    await db.schema.createTable('notes', (table) => {
      table.increments('id')
      table.string('text').notNullable()
      table.integer('folderId').nullable()
      table.string('owner').notNullable()
    })
    await db.schema.createTable('labels', (table) => {
      table.increments('id')
      table.string('name').notNullable()
      table.string('color').notNullable()
      table.datetime('deletedAt', { precision: 3 }).nullable()
    })
    const app = jwtApp()
    useJwtAuthentication(app)
    app.configure(
      feathersQuery({
        Model: db,
        resources: [folderResource, noteResource, labelResource],
        logger: { error: () => {} },
        graphql
      })
    )
    for (const path of ['folders', 'notes']) {
      app.service(path).hooks({
        before: { create: [stampOwner] },
        after: {
          create: [failAfterWriteOnRequest],
          patch: [failAfterWriteOnRequest],
          remove: [failAfterWriteOnRequest]
        }
      })
    }
    return { app, db }
  }
}
