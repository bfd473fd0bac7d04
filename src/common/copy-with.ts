/**
 * `{ ...base, ...changes }`, made so that V8 reuses one hidden class for all the copies a call site makes.
 *
 * V8 gives every object made by a literal that starts with a spread and then adds to it (`{ ...params, query }`)
 * a hidden class of its own, which makes every property read downstream (Feathers and its hooks reading
 * `params`) slower; copies made by `Object.assign` share their classes (docs/design-notes.md, "copyWith").
 *
 * For the copies made per request or per service call; literals built once (options, schemas) keep the
 * spread, which reads better.
 */
export function copyWith<T extends object, C extends object>(
  base: T | undefined,
  changes: C
): Omit<T, keyof C> & C {
  // Object.assign writes an own `__proto__` key (JSON.parse makes one from a client's payload) through the
  // prototype setter, where spread copies it as data: such a copy takes the spread's way.
  if ((base && Object.hasOwn(base, '__proto__')) || Object.hasOwn(changes, '__proto__')) {
    return { ...base, ...changes } as Omit<T, keyof C> & C
  }
  return Object.assign({}, base, changes) as Omit<T, keyof C> & C
}
