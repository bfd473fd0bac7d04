import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'

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
