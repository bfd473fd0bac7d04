import { badField } from '../common/errors'
import { keyName } from './shape-key'
import { BoundedCache } from '../common/bounded-cache'
import { storedFields, type ResolvedField, type ResolvedResource } from '../resource/resolved'

/** Which columns a statement reads and which fields the records it returns carry. */
export interface Projection {
  /** Stored fields the statement selects. */
  stored: ResolvedField[]
  /** Computed fields to compute; they may read any stored field, so with any of them every one is selected. */
  computed: ResolvedField[]
  /** Equal keys, equal projections: the selected fields' quoted names, or '' for all (a selection has the id). */
  key: string
}

const everything = new WeakMap<ResolvedResource, Projection>()
/** Projections of `select` lists by key, per resource, so that the same selection is the same object. */
const selections = new WeakMap<ResolvedResource, BoundedCache<Projection>>()

/** Every stored field and every computed one: what REST and hooks see without `query.select`. */
export function fullProjection(resource: ResolvedResource): Projection {
  let full = everything.get(resource)
  if (!full) {
    full = {
      stored: storedFields(resource),
      computed: resource.fields.filter((field) => field.computed),
      key: ''
    }
    everything.set(resource, full)
  }
  return full
}

/**
 * The projection of `query.select` (field names, as GraphQL asks for the fields a client selected): those
 * fields, the id, and `required` (what the statement itself needs: the partition key, the sort keys of a
 * keyset stream). Reading a 1,000-character description nobody asked for costs the database and the decoder
 * alike. Selecting a computed field selects every stored one.
 */
export function projection(
  resource: ResolvedResource,
  select: readonly string[] | undefined,
  required: readonly ResolvedField[] = []
): Projection {
  if (select === undefined) return fullProjection(resource)
  if (!Array.isArray(select)) throw badField('select', 'must be a list of field names')
  const wanted = new Set<ResolvedField>([resource.idField, ...required])
  for (const name of select) {
    const field = typeof name === 'string' ? resource.fieldMap.get(name) : undefined
    if (!field) throw badField('select', `"${String(name)}" is not a field of ${resource.name}`)
    if (field.computed) return fullProjection(resource)
    wanted.add(field)
  }
  // In the resource's field order, so that equal selections compile to equal SQL (one compiled statement).
  const stored = fullProjection(resource).stored.filter((field) => wanted.has(field))
  const key = stored.map(keyName).join(',')
  let kept = selections.get(resource)
  if (!kept) {
    // Subsets of a resource's fields are many; a few hundred cover real clients' queries. What hangs off an
    // evicted projection (its decoder, its column list) goes with it.
    kept = new BoundedCache()
    selections.set(resource, kept)
  }
  return kept.get(key, () => ({ stored, computed: [], key }))
}
