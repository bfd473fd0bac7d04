import type { ResolvedResource } from '../resource/resolved'
import type { Filter } from '../model/query'
import { relatedResources, type RelationScopes } from '../query/relation-filter'

/**
 * The scopes of every resource the relation filters of `roots` reach (each root a resource and a filter on it),
 * and of those their scopes' own relation filters reach in turn (an `authorize` may filter by a relation too):
 * each resource's scope asked once per call. Undefined when no root filters by a relation.
 */
export function relationScopes(
  roots: ReadonlyArray<readonly [ResolvedResource, Filter | undefined]>,
  scopeOf: (resource: ResolvedResource) => Promise<Filter | undefined>,
  maxDepth: number
): Promise<RelationScopes> | undefined {
  const pending = new Set<ResolvedResource>()
  for (const [resource, filter] of roots) relatedResources(resource, filter, maxDepth, pending)
  // Most filters have no relation filter: nothing to wait for.
  return pending.size === 0 ? undefined : scopesOf(pending, scopeOf, maxDepth)
}

async function scopesOf(
  pending: Set<ResolvedResource>,
  scopeOf: (resource: ResolvedResource) => Promise<Filter | undefined>,
  maxDepth: number
): Promise<RelationScopes> {
  const scopes = new Map<ResolvedResource, Filter | undefined>()
  while (pending.size > 0) {
    const batch = [...pending].filter((resource) => !scopes.has(resource))
    pending.clear()
    const found = await Promise.all(batch.map((resource) => scopeOf(resource)))
    batch.forEach((resource, index) => scopes.set(resource, found[index]))
    for (const [index, resource] of batch.entries()) {
      for (const next of relatedResources(resource, found[index], maxDepth)) {
        if (!scopes.has(next)) pending.add(next)
      }
    }
  }
  return scopes
}
