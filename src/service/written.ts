import type { HookContext } from '@feathersjs/feathers'
import type { Projection } from './projection'
import type { ResourceRecord } from './resource-service'

/**
 * The whole records a write left (hidden fields included) when the caller narrowed its answer with `$select`,
 * by the call's params until the write's first after hook moves them onto its hook context.
 */
const wholeByCall = new WeakMap<object, ResourceRecord[]>()

/**
 * What a write answers of the records it read back whole: the caller's `$select` of each. The whole ones are
 * kept for the call (`params`), since real-time events must be authorized against them: a rule on a field
 * the answer leaves out must still decide.
 */
export function answeredRecords(
  params: object,
  records: ResourceRecord[],
  fields: Projection,
  whole: Projection
): ResourceRecord[] {
  if (fields === whole) return records
  wholeByCall.set(params, [...(wholeByCall.get(params) ?? []), ...records])
  const kept = [...fields.stored, ...fields.computed].map((field) => field.name)
  return records.map((record) => {
    const answered: ResourceRecord = {}
    for (const name of kept) if (name in record) answered[name] = record[name]
    return answered
  })
}

/** The property of a write's hook context that holds its whole records when its answer was narrowed. */
const WRITTEN = 'writtenRecords'

/**
 * The plugin's first after hook of every write, which runs before any other hook or resolver could replace
 * the answered records: puts the whole records on the hook context, where the channels and GraphQL
 * subscriptions read them, on this instance and (feathers-sync sends the context) on the others.
 */
export function keepWrittenRecords(context: HookContext) {
  const records = wholeByCall.get(context.params)
  if (!records) return
  wholeByCall.delete(context.params)
  ;(context as HookContext & { [WRITTEN]?: ResourceRecord[] })[WRITTEN] = records
}

/** The records a write left, whole: what its hook context keeps of a narrowed answer, or its result. */
export function writtenRecords(context: HookContext): ResourceRecord[] {
  const kept = (context as { [WRITTEN]?: ResourceRecord[] })[WRITTEN]
  if (kept) return kept
  return (Array.isArray(context.result) ? context.result : [context.result]) as ResourceRecord[]
}
