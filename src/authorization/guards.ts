import type { Guard } from '../resource/definition'
import type { ResolvedResource } from '../resource/resolved'

/** The guards of the resource's reads: its own and `read.guards`. */
export function readGuards(resource: ResolvedResource): Guard[] {
  const { definition } = resource
  return [...(definition.guards ?? []), ...(definition.read?.guards ?? [])]
}

export type GuardedMethod = 'find' | 'get' | 'aggregate' | 'create' | 'update' | 'patch' | 'remove' | 'upsert'

/**
 * The guards each service method runs first, on every transport: the resource's own, then its endpoint's.
 * The service hooks run them; the OpenAPI document marks the operations that have any as needing a token.
 */
export function methodGuards(resource: ResolvedResource): Record<GuardedMethod, Guard[]> {
  const { definition } = resource
  const common = definition.guards ?? []
  const read = readGuards(resource)
  const update = [...common, ...(definition.update?.one?.guards ?? [])]
  const create = [...common, ...(definition.create?.guards ?? [])]
  return {
    find: read,
    get: read,
    aggregate: read,
    create,
    update,
    patch: update,
    // An upsert may create and may change: it passes both endpoints' guards (each once).
    upsert: [...new Set([...create, ...update])],
    remove: [...common, ...(definition.delete?.one?.guards ?? [])]
  }
}
