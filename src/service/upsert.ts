import { Conflict, Forbidden } from '@feathersjs/errors'
import type { Id } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { copyWith } from '../common/copy-with'
import { runQuery, writeError } from '../dialect/database-errors'
import type { UpsertRow } from '../dialect/upsert'
import type { ResourceParams, ResourceRecord } from '../model/records'
import type { Projection } from '../query/projection'
import type { ResourceStore } from './store'
import { inWriteTransaction } from './writes'
import { answeredRecords } from './written-records'

/** The event of each record an upsert wrote: as its row went. */
export type UpsertEvent = 'created' | 'patched'

/** One record of an upsert, encoded: the row a create inserts and the columns an existing record takes. */
export interface UpsertWrite {
  insert: ResourceRecord
  set: string[]
}

/**
 * Creates each record, or changes the one holding its key, in one transaction, answering the `fields` of
 * each as written. `created` and `patched` are the call as a create and as a patch, each with its scope
 * (`authorize`): an existing record out of the patch's reach is a 409, a record the write leaves outside
 * the caller's reach a 403, and either undoes the whole call.
 */
export function upsertRecords(
  store: ResourceStore,
  created: ResourceParams,
  patched: ResourceParams,
  writes: UpsertWrite[],
  fields: Projection
) {
  return inWriteTransaction(store, created, async (inner) => {
    const asPatch = copyWith(patched, { transaction: inner.transaction })
    const visible = await store.visible(asPatch, undefined)
    const reach = (builder: Knex.QueryBuilder) => store.statements.whereVisible(builder, visible)
    const records: ResourceRecord[] = []
    const events: UpsertEvent[] = []
    for (const write of writes) {
      const row = upsertRow(store, write, reach)
      const outcome = await runUpsert(store, inner, row)
      if ('refused' in outcome) throw await refusal(store, inner, outcome.refused, row)
      // Read back within the write's own scope: a create or a change may not leave the caller's reach.
      const record = await store.getRecord(outcome.id as Id, outcome.created ? inner : asPatch)
      if (!record) {
        throw new Forbidden(
          outcome.created
            ? `The new ${store.resource.name} is outside what you may access`
            : `The upsert would move a ${store.resource.name} outside what you may access`
        )
      }
      records.push(record)
      events.push(outcome.created ? 'created' : 'patched')
    }
    return answeredRecords(records, fields, events)
  })
}

function upsertRow(store: ResourceStore, write: UpsertWrite, reach: UpsertRow['reach']): UpsertRow {
  const { resource } = store
  return {
    table: resource.table,
    idColumn: resource.idField.column,
    insert: write.insert,
    set: write.set,
    version: resource.version?.field.column,
    key: resource.upsertKey!.map((field) => field.column),
    reach
  }
}

async function runUpsert(store: ResourceStore, params: ResourceParams, row: UpsertRow) {
  try {
    return await store.target.dialect.upsert(store.knex(params), row)
  } catch (error) {
    throw writeError(error, store.resource, row.insert)
  }
}

/**
 * Why an upsert wrote nothing: another unique value is taken, or the record holding the key is one the caller
 * may not change, or a removed one (soft delete), which still holds its key as it would against a create.
 */
async function refusal(
  store: ResourceStore,
  params: ResourceParams,
  why: 'unreachable' | 'taken',
  row: UpsertRow
) {
  const { resource } = store
  if (why === 'taken') return new Conflict('A record with the same unique value exists')
  const key = resource.upsertKey!.map((field) => field.name)
  const errors = (message: string) => key.map((field) => ({ field, message }))
  if (resource.softDeleteColumn && (await removedHolder(store, params, row))) {
    return new Conflict(`A removed ${resource.name} still holds this ${key.join(' and ')}`, {
      key,
      errors: errors('is held by a removed record')
    })
  }
  return new Conflict(`A ${resource.name} with this ${key.join(' and ')} exists that you may not change`, {
    key,
    errors: errors('is held by a record you may not change')
  })
}

/** Whether the record holding the row's key is a removed one. */
async function removedHolder(store: ResourceStore, params: ResourceParams, row: UpsertRow) {
  const column = store.resource.softDeleteColumn!
  const byKey = Object.fromEntries(row.key.map((name) => [name, row.insert[name]]))
  const [holder] = (await runQuery(
    store.table(params).select(column).where(byKey).limit(1)
  )) as ResourceRecord[]
  return holder !== undefined && holder[column] !== null
}
