import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'
import type { ResolvedResource } from '../../resource/resolved'
import { readsOnlyId } from '../type/object-type'

/**
 * The fields a selection set selects, by field name (aliases and fragments resolved), added to `into`. A
 * fragment is followed once per walk (`visited`). @skip/@include are not evaluated: a conditionally selected
 * field counts as selected.
 */
function selectedNames(
  info: GraphQLResolveInfo,
  selectionSet: SelectionSetNode | undefined,
  into: Map<string, FieldNode[]>,
  visited = new Set<string>()
) {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      const nodes = into.get(selection.name.value) ?? []
      nodes.push(selection)
      into.set(selection.name.value, nodes)
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      selectedNames(info, selection.selectionSet, into, visited)
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value)
      selectedNames(info, info.fragments[selection.name.value]?.selectionSet, into, visited)
    }
  }
  return into
}

/** The fields selected directly below the current field, through all its nodes. */
function selectedBelow(info: GraphQLResolveInfo, nodes: readonly FieldNode[]) {
  const names = new Map<string, FieldNode[]>()
  for (const node of nodes) selectedNames(info, node.selectionSet, names)
  return names
}

/**
 * Whether the current field's selection asks for `name` directly below it (through fragments too), so that
 * work such as counting runs only when its result is wanted.
 */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  return selectedBelow(info, info.fieldNodes).has(name)
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
  if (!recordFieldsCache.has(info.fieldNodes)) {
    recordFieldsCache.set(info.fieldNodes, recordFields(info, resource, path))
  }
  const fields = recordFieldsCache.get(info.fieldNodes)
  // A copy: hooks may add to `query.select`, and compiled documents keep their field nodes across requests.
  return fields && [...fields]
}

function recordFields(info: GraphQLResolveInfo, resource: ResolvedResource, path: string[]) {
  let level: readonly FieldNode[] = info.fieldNodes
  for (const step of path) level = selectedBelow(info, level).get(step) ?? []
  const names = selectedBelow(info, level)
  const needed = new Set<string>()
  for (const name of names.keys()) {
    const field = resource.fieldMap.get(name)
    const one = resource.one.find((relation) => relation.name === name)
    if (field?.serialized) needed.add(name)
    else if (one) needed.add(one.foreignKey.name)
    else if (name !== '__typename' && !readsOnlyId(resource, name)) return undefined
  }
  return [...needed]
}
