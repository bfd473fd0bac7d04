import { badField } from './errors'

/** The names every object answers to (`toString`, `constructor`, `__proto__`, ...): never a field or operator. */
export const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * Checks that `value` is plain JSON data as a client can send it: objects whose prototype is Object's (or
 * none), no key named like a property every object has, nested at most `maxDepth` deep. Such a key is
 * otherwise lost on the way (`qs` drops `?id[toString]=1`; `Object.assign` makes `{"__proto__": {...}}` the
 * copy's prototype) and the condition it held silently ignored. Walks without recursion, so that no nesting
 * can overflow the stack. Throws a 400 naming the path.
 */
export function checkPlainJson(value: unknown, where: string, maxDepth: number) {
  const pending: Array<[unknown, string, number]> = [[value, where, 0]]
  while (pending.length > 0) {
    const [current, path, depth] = pending.pop()!
    if (current === null || typeof current !== 'object') continue
    if (depth > maxDepth) throw badField(path, `is nested more than ${maxDepth} levels deep`)
    if (!Array.isArray(current)) {
      const prototype = Object.getPrototypeOf(current)
      if (prototype !== Object.prototype && prototype !== null) {
        throw badField(path, 'must be plain JSON: an object with a prototype of its own is no query')
      }
    }
    for (const key of Object.keys(current)) {
      if (PROTOTYPE_KEYS.has(key)) throw badField(`${path}.${key}`, 'names a property every object has')
      pending.push([(current as Record<string, unknown>)[key], `${path}.${key}`, depth + 1])
    }
  }
}
