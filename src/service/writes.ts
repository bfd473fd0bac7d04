import { BadRequest, Conflict, Forbidden } from '@feathersjs/errors'
import type { Id } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { copyWith } from '../common/copy-with'
import { removeError, runQuery, writeError } from '../dialect/database-errors'
import { writeTransaction } from '../dialect/sqlite-locks'
import type { Filter, Scalar } from '../model/query'
import type { ResourceParams, ResourceRecord } from '../model/records'
import { andFilters } from '../query/filters'
import type { Projection } from '../query/projection'
import { findRecords } from './find'
import type { MultiMethod } from './multi'
import { notFound, type ResourceStore } from './store'
import { answeredRecords } from './written-records'
import { refuseHiddenChildren } from './cascades'
import { matchingVersion, staleRecord, type Precondition } from './record-version'

/** Runs `work` in the caller's transaction or a new one, so a failed check leaves no partial write. */
export async function inWriteTransaction<T>(
  store: ResourceStore,
  params: ResourceParams,
  work: (params: ResourceParams) => Promise<T>
) {
  const open = store.knex(params)
  if (open !== store.Model) return work(copyWith(params, { transaction: { trx: open as Knex.Transaction } }))
  return runQuery(writeTransaction(store.Model, (trx) => work(copyWith(params, { transaction: { trx } }))))
}

/**
 * An INSERT or UPDATE of `row` (encoded) to this resource's table. A constraint the table enforces names the
 * field it is about to the client, but not a hidden or filterOnly field: clients are never shown those.
 */
async function runWrite<T>(store: ResourceStore, row: ResourceRecord, query: PromiseLike<T>): Promise<T> {
  try {
    return await query
  } catch (error) {
    throw writeError(error, store.resource, row)
  }
}

/** A DELETE of this resource's records: a foreign key refusing it is a record still referenced. */
async function runRemove<T>(query: PromiseLike<T>): Promise<T> {
  try {
    return await query
  } catch (error) {
    throw removeError(error)
  }
}

/**
 * The records `filter` names within the call's scope, live ones only: what an UPDATE or DELETE may reach.
 * A function making the builder, since a knex builder is a thenable, which an async function would run.
 */
async function writable(store: ResourceStore, params: ResourceParams, filter: Filter | undefined) {
  const visible = await store.visible(params, filter)
  return () => store.statements.whereVisible(store.table(params), visible)
}

/** The records with these ids the call may read, whole, ordered by id. */
async function readBack(store: ResourceStore, params: ResourceParams, filter: Filter | undefined) {
  const byId = [{ field: store.resource.idField.name, direction: 'ASC' as const }]
  const query = { filter, sorting: byId }
  return (await findRecords(store, copyWith(params, { queryModel: true, query }))) as ResourceRecord[]
}

/** Inserts `rows` (encoded) and answers the `fields` of each record as written. */
export function insertRecords(
  store: ResourceStore,
  params: ResourceParams,
  rows: ResourceRecord[],
  fields: Projection
) {
  return inWriteTransaction(store, params, async (inner) => {
    const records: ResourceRecord[] = []
    for (const row of rows) records.push(await insert(store, row, inner))
    return answeredRecords(records, fields)
  })
}

async function insert(store: ResourceStore, row: Record<string, unknown>, params: ResourceParams) {
  const { idField, name } = store.resource
  const inserted: unknown[] = await runWrite(
    store,
    row,
    store.target.dialect.insert(store.table(params), row, idField.column)
  )
  const generated = inserted[0] as unknown
  const id = (row[idField.column] ??
    (generated && typeof generated === 'object'
      ? (generated as ResourceRecord)[idField.column]
      : generated)) as Id
  const record = await store.getRecord(id, params)
  // Writing a record the caller could not read back is refused, not half done.
  if (!record) throw new Forbidden(`The new ${name} is outside what you may access`)
  return record
}

/** Changes the record with this id within `filter` to `row` (encoded) and answers its `fields`. */
export function changeRecord(
  store: ResourceStore,
  params: ResourceParams,
  id: Id,
  row: ResourceRecord,
  filter: Filter | undefined,
  fields: Projection,
  precondition?: Precondition
) {
  return inWriteTransaction(store, params, async (inner) => {
    if (Object.keys(row).length > 0) {
      const reached = await writable(store, inner, filter)
      const builder = store.statements.whereIdIs(reached(), store.idValue(id, inner) as Knex.Value)
      // The version is checked by the UPDATE itself: no other write can come between a check and it.
      const changed = await runWrite(
        store,
        row,
        matchingVersion(builder, store.resource, precondition).update(row)
      )
      if (!changed) throw await missingOrStale(store, inner, id, filter, precondition)
    } else if (!(await store.getRecord(id, inner, filter))) {
      throw notFound(store, id)
    }
    // Read back within the scope only: the change may well take the record out of the call's own filter.
    const record = await store.getRecord(id, inner)
    if (!record)
      throw new Forbidden(`The update would move ${store.resource.name} '${id}' outside what you may access`)
    return answeredRecords([record], fields)[0]
  })
}

/** Why a write of one record changed nothing: it is out of reach (404), or in another version (412). */
async function missingOrStale(
  store: ResourceStore,
  params: ResourceParams,
  id: Id,
  filter: Filter | undefined,
  precondition: Precondition | undefined
) {
  const reachable = precondition !== undefined && (await store.getRecord(id, params, filter))
  return reachable ? staleRecord(store.resource, id) : notFound(store, id)
}

/** The ids of the records a multi patch or remove reaches, refused when there are more than `max`. */
async function idsReached(
  store: ResourceStore,
  method: MultiMethod,
  params: ResourceParams,
  filter: Filter | undefined,
  max: number
) {
  const { idColumn } = store.statements
  const rows: ResourceRecord[] = await runQuery(
    (await writable(store, params, filter))()
      .select(idColumn)
      .orderBy(idColumn)
      .limit(max + 1)
  )
  if (rows.length > max) {
    throw new BadRequest(
      `${store.resource.name}: ${method} changes at most ${max} records at once; narrow the query`
    )
  }
  return rows.map((row) => row[store.resource.idField.column] as Id)
}

/** Another call changed the records a multi write reached, between reaching and writing them: retryable. */
function concurrentChange(store: ResourceStore, doing: string) {
  return new Conflict(`${store.resource.name} records changed while ${doing} them; try again`)
}

/** Changes every record `filter` reaches (at most `max`) to `row` (encoded) and answers their `fields`. */
export function changeRecords(
  store: ResourceStore,
  params: ResourceParams,
  row: ResourceRecord,
  filter: Filter | undefined,
  fields: Projection,
  max: number
) {
  return inWriteTransaction(store, params, async (inner) => {
    const ids = await idsReached(store, 'patch', inner, filter, max)
    if (ids.length === 0) return []
    const byId: Filter = { [store.resource.idField.name]: { in: ids as Scalar[] } }
    const writes = Object.keys(row).length > 0
    const changed = writes
      ? await runWrite(store, row, (await writable(store, inner, byId))().update(row))
      : ids.length
    const records = await readBack(store, inner, byId)
    // Fewer changed than reached: another call removed some meanwhile (PostgreSQL's READ COMMITTED lets it),
    // which a retry resolves. All changed but fewer readable: the change itself moved them out of reach.
    if (changed < ids.length || (!writes && records.length < ids.length)) {
      throw concurrentChange(store, 'patching')
    }
    if (records.length < ids.length) {
      throw new Forbidden(`The update would move ${store.resource.name} records outside what you may access`)
    }
    return answeredRecords(records, fields)
  })
}

/**
 * Removes the record with this id, or with `id` null every record `filter` reaches (at most `max`), and
 * answers their `fields`: soft deleted where the resource says so.
 */
export function removeRecords(
  store: ResourceStore,
  params: ResourceParams,
  id: Id | null,
  filter: Filter | undefined,
  fields: Projection,
  max: number,
  precondition?: Precondition
) {
  return inWriteTransaction(store, params, async (inner) => {
    const ids = id === null ? await idsReached(store, 'remove', inner, filter, max) : [id]
    if (ids.length === 0) return []
    const idValues = ids.map((value) => store.idValue(value, inner)) as Scalar[]
    const reached = andFilters(filter, { [store.resource.idField.name]: { in: idValues } })
    const records = await readBack(store, inner, reached)
    if (id !== null && records.length === 0) throw notFound(store, id)
    const { softDeleteColumn } = store.resource
    if (!softDeleteColumn) await refuseHiddenChildren(store, inner, idValues)
    const builder = matchingVersion((await writable(store, inner, reached))(), store.resource, precondition)
    const removed = softDeleteColumn
      ? await runQuery(builder.update({ [softDeleteColumn]: new Date() }))
      : await runRemove(builder.delete())
    if (removed !== records.length) {
      throw id === null
        ? concurrentChange(store, 'removing')
        : await missingOrStale(store, inner, id, filter, precondition)
    }
    const answered = answeredRecords(records, fields)
    return id === null ? answered : answered[0]
  })
}
