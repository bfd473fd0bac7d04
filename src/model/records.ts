import type { Params } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import type { Filter, ResourceQuery } from './query'

export type ResourceRecord = Record<string, unknown>

export interface ResourceParams extends Params<ResourceQuery> {
  /**
   * `query` is in the query model (`{ filter, sorting, paging, ... }`): the plugin's own REST, CSV and GraphQL
   * routes say so. Without it `query` is in Feathers' query syntax, as every other caller sends it.
   */
  queryModel?: boolean
  /** Feathers' paginate setting for this call: `false` for every matching record as an array. */
  paginate?: false | { default?: number; max?: number }
  /**
   * Filters ANDed into every statement of the call: the authorization filter and defaultFilter, set by the
   * plugin's hooks. Kept apart from `query.filter` so that no hook can lose them by replacing the filter.
   */
  scope?: Filter
  /**
   * A batched lookup of records by id on behalf of references (GraphQL one-relations): rules that scope
   * collections (`defaultFilter`) do not apply, as they do not for `get`; `authorize` does.
   */
  lookup?: boolean
  /**
   * The request this call is part of (a GraphQL operation's aliases share one): how many of its aggregates
   * were refused for grouping into too many groups. After one, each unpaged grouping counts its keys first,
   * so that a request cannot buy a whole grouping per alias only to have each refused.
   */
  groupRefusals?: { count: number }
  /** An open transaction (compatible with @feathersjs/knex's `transaction` hooks). */
  transaction?: { trx: Knex.Transaction }
  headers?: Record<string, string | string[] | undefined>
  /** The caller's IP address, which the plugin's HTTP, socket.io and WebSocket surfaces set (budgets' default key). */
  ip?: string
  /**
   * The versions of the record an update, patch or remove may change (optimistic concurrency): its `ETag`
   * (`'"3"'`), several, `'*'`, or the version as a number; a stale one is a 412. REST takes `If-Match`,
   * Feathers clients `$ifMatch` in the query, GraphQL `version`.
   */
  ifMatch?: string | number
  /**
   * On an upsert, set by a hook: fields a created record gets and an existing one keeps (audit columns such as
   * `created` and `createdBy`), where the body's fields change an existing record too.
   */
  createOnly?: Record<string, unknown>
  /**
   * Service options for this call (`paginate`, `multi`), as Feathers' adapters take them; transports never
   * set it, so only server code can.
   */
  adapter?: {
    paginate?: { default: number; max: number } | false
    multi?: boolean | Array<'create' | 'patch' | 'remove'>
  }
}
