/** Name derivations shared by REST paths, GraphQL names and table names. */

export function lowerFirst(name: string) {
  return name.charAt(0).toLowerCase() + name.slice(1)
}

export function upperFirst(name: string) {
  return name.charAt(0).toUpperCase() + name.slice(1)
}

/** English plural good enough for resource names (TodoItem → TodoItems, Category → Categories). */
export function pluralize(name: string) {
  if (/[^aeiou]y$/i.test(name)) return name.slice(0, -1) + 'ies'
  if (/(s|x|z|ch|sh)$/i.test(name)) return name + 'es'
  return name + 's'
}

function words(name: string) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase())
}

export function kebabCase(name: string) {
  return words(name).join('-')
}

export function snakeCase(name: string) {
  return words(name).join('_')
}
