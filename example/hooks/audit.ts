import type { HookContext } from '@feathersjs/feathers'

/** The acting user's name from the `user-name` request header (REST and GraphQL alike), or null. */
function userName(context: HookContext) {
  const header = context.params.headers?.['user-name']
  const value = Array.isArray(header) ? header[0] : header
  return typeof value === 'string' && value.length > 0 ? value : null
}

/** Before create: the server owns the timestamps and the audit columns, of each record of a multi create too. */
export function stampCreation(context: HookContext) {
  const now = new Date().toISOString()
  const user = userName(context)
  const stamp = (record: object) => ({
    ...record,
    created: now,
    updated: now,
    createdBy: user,
    updatedBy: user
  })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
}

/** Before patch: a new `updated` time and the updating user. */
export function stampUpdate(context: HookContext) {
  context.data = { ...context.data, updated: new Date().toISOString(), updatedBy: userName(context) }
}

/**
 * Before upsert: each record is created or changes an existing one, which the hook cannot know; the update
 * stamps go into the data, the creation stamps into `params.createOnly`, which only a created record gets.
 */
export function stampUpsert(context: HookContext) {
  const now = new Date().toISOString()
  const user = userName(context)
  const stamp = (record: object) => ({ ...record, updated: now, updatedBy: user })
  context.data = Array.isArray(context.data) ? context.data.map(stamp) : stamp(context.data)
  context.params = { ...context.params, createOnly: { created: now, createdBy: user } }
}
