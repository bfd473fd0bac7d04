import { AsyncLocalStorage } from 'node:async_hooks'

/** The reads one computation of a live query made. */
export interface RecordedReads {
  /** What was read, one entry per distinct statement (`resource|shape|values`). */
  readonly statements: Set<string>
  /** The SQL text of each distinct statement: the tables it names are the ones whose writes may change it. */
  readonly sql: Set<string>
  /** The base paths of the resources whose services read. */
  readonly resources: Set<string>
  /** Those read as relations of other records (GraphQL relation fields) rather than as the question itself. */
  readonly related: Set<string>
  /** A value JSON could not write was bound: the reads cannot be compared with another computation's. */
  incomparable: boolean
}

const recording = new AsyncLocalStorage<RecordedReads>()
const relationReads = new AsyncLocalStorage<boolean>()

/**
 * Runs `work`, recording every statement the services read with while it runs (asynchronously too: relation
 * loads, counts). Two computations that read the same statements with the same values read the same rows,
 * whoever asked: the scope of each resource (`authorize`, `defaultFilter`, a hook's own narrowing of the
 * query) is among the bound values.
 */
export async function withReadsRecorded<T>(
  work: () => Promise<T>
): Promise<{ value: T; reads: RecordedReads }> {
  const reads: RecordedReads = {
    statements: new Set(),
    sql: new Set(),
    resources: new Set(),
    related: new Set(),
    incomparable: false
  }
  const value = await recording.run(reads, work)
  return { value, reads }
}

/** Runs `work` as the read of relations of records already read (recorded as such). */
export function asRelationRead<T>(work: () => Promise<T>): Promise<T> {
  return recording.getStore() ? relationReads.run(true, work) : work()
}

/**
 * Notes a statement read while a live query's computation is recorded; nothing otherwise (`sql` is asked only
 * then).
 */
export function recordRead(resource: string, shape: string, values: readonly unknown[], sql: () => string) {
  const reads = recording.getStore()
  if (!reads) return
  reads.resources.add(resource)
  if (relationReads.getStore()) reads.related.add(resource)
  reads.sql.add(sql())
  try {
    reads.statements.add(`${resource}|${shape}|${JSON.stringify(values)}`)
  } catch {
    reads.incomparable = true
  }
}
