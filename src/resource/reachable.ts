import type { ResolvedResource } from './resolved'

/** A resource and every resource its relations reach, transitively (many-to-many join resources too). */
export function reachableResources(root: ResolvedResource): ResolvedResource[] {
  const seen = new Set<ResolvedResource>()
  const visit = (resource: ResolvedResource) => {
    if (seen.has(resource)) return
    seen.add(resource)
    for (const relation of [...resource.one, ...resource.many]) {
      visit(relation.target)
      if (relation.kind === 'many' && relation.through) visit(relation.through.resource)
    }
  }
  visit(root)
  return [...seen]
}
