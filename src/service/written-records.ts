import type { HookContext, NextFunction } from '@feathersjs/feathers'
import type { ResolvedResource } from '../resource/resolved'
import './declarations'
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Projection } from '../query/projection'
import type { ResourceRecord } from '../model/records'

/**
 * The whole records the write method of the current call left, collected for `keepWrittenRecords`, and
 * an upsert's event for each (`created` or `patched`, as its row went).
 */
const written = new AsyncLocalStorage<{ records: ResourceRecord[]; events: string[] }>()

/**
 * What a write answers of the records it read back whole: the `fields` the caller selected (`$select`) of
 * each. The whole ones are kept for the call, since real-time events must be authorized against them: a rule
 * on a field the answer leaves out, or a resolver changes, must still decide on what the database holds.
 */
export function answeredRecords(records: ResourceRecord[], fields: Projection, events?: string[]) {
  const kept = written.getStore()
  kept?.records.push(...records)
  if (events) kept?.events.push(...events)
  // The projection of every field (no `$select`, or one with a computed field) answers the records whole.
  if (fields.key === '') return records
  const names = [...fields.stored, ...fields.computed].map((field) => field.name)
  return records.map((record) => {
    const answered: ResourceRecord = {}
    for (const name of names) if (name in record) answered[name] = record[name]
    return answered
  })
}

/**
 * An around hook of every plugin write, inside the application's `around.all` hooks (where resolvers sit)
 * and outside its before and after hooks: it collects what the write method of this very call left (a write
 * made by one of its hooks collects its own) and puts it on the hook context, where the channels and GraphQL
 * subscriptions read it, on this instance and (feathers-sync sends the context) on the others.
 */
export async function keepWrittenRecords(context: HookContext, next: NextFunction) {
  const kept = { records: [] as ResourceRecord[], events: [] as string[] }
  await written.run(kept, next)
  context.writtenRecords = kept.records
  if (kept.events.length) context.writtenEvents = kept.events
}

/** The records a write left, whole: what its hook context keeps, or (an event of another kind) its result. */
export function writtenRecords(context: HookContext): ResourceRecord[] {
  if (context.writtenRecords) return context.writtenRecords as ResourceRecord[]
  return (Array.isArray(context.result) ? context.result : [context.result]) as ResourceRecord[]
}

/**
 * The record as the write left it, hidden fields included: what `authorize` rules may refer to, also when
 * the caller narrowed the write's answer with `$select`.
 */
export function fullRecord(
  resource: ResolvedResource,
  data: ResourceRecord,
  context: HookContext
): ResourceRecord {
  const id = resource.idField.name
  return writtenRecords(context).find((record) => record && String(record[id]) === String(data?.[id])) ?? data
}
