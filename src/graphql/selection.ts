import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'
import type { ResolvedResource } from '../resource/resolve'

/**
 * Whether the current field's selection asks for `name` directly below it (through fragments too), so that
 * work such as counting runs only when its result is wanted. @skip/@include are not evaluated: a
 * conditionally selected field counts as selected.
 */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  const visited = new Set<string>()
  const search = (selectionSet: SelectionSetNode | undefined): boolean =>
    !!selectionSet?.selections.some((selection) => {
      switch (selection.kind) {
        case Kind.FIELD:
          return selection.name.value === name
        case Kind.INLINE_FRAGMENT:
          return search(selection.selectionSet)
        case Kind.FRAGMENT_SPREAD: {
          const fragmentName = selection.name.value
          if (visited.has(fragmentName)) return false
          visited.add(fragmentName)
          return search(info.fragments[fragmentName]?.selectionSet)
        }
      }
    })
  return info.fieldNodes.some((node) => search(node.selectionSet))
}

/** The names of the fields a selection set selects, through fragments. */
function selectedNames(info: GraphQLResolveInfo, selectionSet: SelectionSetNode | undefined, into: Map<string, FieldNode[]>) {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      const nodes = into.get(selection.name.value) ?? []
      nodes.push(selection)
      into.set(selection.name.value, nodes)
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      selectedNames(info, selection.selectionSet, into)
    } else {
      selectedNames(info, info.fragments[selection.name.value]?.selectionSet, into)
    }
  }
  return into
}

/** Per resource, the object fields that read nothing of the record but its id, as the object type declares. */
const idOnlyFields = new WeakMap<ResolvedResource, Set<string>>()

export function markIdOnlyFields(resource: ResolvedResource, names: Set<string>) {
  idOnlyFields.set(resource, names)
}

const recordFieldsCache = new WeakMap<readonly FieldNode[], string[] | undefined>()

/**
 * The record fields that what the client selected below `path` (`['edges', 'node']` in a connection, `[]` for
 * a record) reads: the resource's own fields, and the foreign key of each one-relation. Many-relations and
 * relation aggregates read the id, which every record carries. A field some other schema part added may read
 * anything: then undefined, the whole record. The same field of every record in a list shares its field
 * nodes, so the answer is worked out once per list.
 */
export function selectedRecordFields(
  info: GraphQLResolveInfo,
  resource: ResolvedResource,
  path: string[]
): string[] | undefined {
  let fields = recordFieldsCache.get(info.fieldNodes)
  if (fields === undefined && !recordFieldsCache.has(info.fieldNodes)) {
    fields = recordFields(info, resource, path)
    recordFieldsCache.set(info.fieldNodes, fields)
  }
  // A copy: hooks may add to `query.select`, and compiled documents keep their field nodes across requests.
  return fields && [...fields]
}

function recordFields(info: GraphQLResolveInfo, resource: ResolvedResource, path: string[]) {
  let level: FieldNode[] = [...info.fieldNodes]
  for (const step of path) {
    const below = new Map<string, FieldNode[]>()
    for (const node of level) selectedNames(info, node.selectionSet, below)
    level = below.get(step) ?? []
  }
  const names = new Map<string, FieldNode[]>()
  for (const node of level) selectedNames(info, node.selectionSet, names)
  const needed = new Set<string>()
  for (const name of names.keys()) {
    const field = resource.fieldMap.get(name)
    const one = resource.one.find((relation) => relation.name === name)
    if (field?.serialized) needed.add(name)
    else if (one) needed.add(one.foreignKey.name)
    else if (name !== '__typename' && !idOnlyFields.get(resource)?.has(name)) return undefined
  }
  return [...needed]
}
