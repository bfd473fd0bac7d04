import type { Guard } from '../resource/definition'
import type { ResolvedResource } from '../resource/resolved'

/** The guards of the resource's reads: its own and `read.guards`. */
export function readGuards(resource: ResolvedResource): Guard[] {
  const { definition } = resource
  return [...(definition.guards ?? []), ...(definition.read?.guards ?? [])]
}
