import { AsyncLocalStorage } from 'node:async_hooks'

/** The reads one computation of a live query made: each statement's resource, shape and bound values. */
export interface RecordedReads {
  /** What was read, one entry per distinct statement (`resource|shape|values`). */
  readonly statements: Set<string>
  /** The base paths of the resources read: writes to any of them may change the result. */
  readonly resources: Set<string>
  /** A value JSON could not write was bound: the reads cannot be compared with another computation's. */
  incomparable: boolean
}

const recording = new AsyncLocalStorage<RecordedReads>()

/**
 * Runs `work`, recording every statement the services read with while it runs (asynchronously too: relation
 * loads, counts). Two computations that read the same statements with the same values read the same rows,
 * whoever asked: the scope of each resource (`authorize`, `defaultFilter`, a hook's own narrowing of the
 * query) is among the bound values.
 */
export async function withReadsRecorded<T>(
  work: () => Promise<T>
): Promise<{ value: T; reads: RecordedReads }> {
  const reads: RecordedReads = { statements: new Set(), resources: new Set(), incomparable: false }
  const value = await recording.run(reads, work)
  return { value, reads }
}

/** Notes a statement read while a live query's computation is recorded; nothing otherwise. */
export function recordRead(resource: string, shape: string, values: readonly unknown[]) {
  const reads = recording.getStore()
  if (!reads) return
  reads.resources.add(resource)
  try {
    reads.statements.add(`${resource}|${shape}|${JSON.stringify(values)}`)
  } catch {
    reads.incomparable = true
  }
}
