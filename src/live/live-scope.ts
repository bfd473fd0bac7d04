import type { ResolvedResource } from '../resource/resolved'
import type { ResourceParams } from '../model/records'
import type { Filter } from '../model/query'
import type { ResourceService } from '../service/resource-service'
import { callerOf } from '../authorization/read-scope'
import { callerAccess } from '../authorization/field-rules'
import { reachableResources } from '../resource/reachable'

/**
 * What a caller may read of every resource a question on `root` can reach: each one's read scope (its guards,
 * `authorize` and `defaultFilter`, as relation reads apply them) and field rules. The statements a computation
 * reads carry the scopes of the resources it read; this covers those it has not read yet (the relations of
 * records that do not exist yet), so that callers share a result only where they would read the same rows
 * and fields of every resource. A scope that refuses the caller is part of the key too, not an error: the
 * question may never read that resource. The root's scope comes back too: a record outside it is in no
 * result of the caller's `find`.
 */
export async function liveScope(
  root: ResolvedResource,
  params: ResourceParams,
  serviceOf: (resource: ResolvedResource) => ResourceService
): Promise<{ key: string; rootScope?: Filter }> {
  const caller = callerOf(params)
  const access = await callerAccess(root, params)
  const parts: string[] = []
  let rootScope: Filter | undefined
  for (const resource of reachableResources(root)) {
    let scope: string
    try {
      const filter = await serviceOf(resource).readScope(caller)
      if (resource === root) rootScope = filter
      scope = JSON.stringify(filter ?? null)
    } catch (error) {
      scope = `refused ${(error as { name?: string }).name ?? 'Error'}`
    }
    parts.push(`${resource.name}=${scope};${access?.of(resource)?.key ?? ''}`)
  }
  return { key: parts.join('\n'), rootScope }
}
