const keyNames = new WeakMap<object, string>()

/**
 * A field in a statement's shape key. Field names are arbitrary strings; JSON quoting keeps one name from
 * reading as another key's syntax.
 */
export function keyName(field: { name: string }) {
  let name = keyNames.get(field)
  if (name === undefined) {
    name = JSON.stringify(field.name)
    keyNames.set(field, name)
  }
  return name
}
