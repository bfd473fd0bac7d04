import type { HookContext } from '@feathersjs/feathers'
import type { ResolvedResource } from '../resource/resolved'
import { createSchemaOf, updateSchemaOf, upsertSchemaOf } from '../resource/input-schemas'
import { compileValidator, type Validate } from '../resource/validator'
import type { Guard } from '../resource/definition'
import { checkReferences } from '../authorization/references'
import { methodGuards } from '../authorization/guards'
import { badField, withFieldsRenamed } from '../common/errors'
import { multiLimit, type MultiOption } from './multi'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Hook = (context: HookContext<any, any>) => void | Promise<void>

/**
 * Validates the body, or each record of a multi create (or upsert), naming the record's index in every
 * error. An array is a multi create or upsert only: before any hook of the application's sees it, it is a 405
 * where `multi` does not allow create and a 400 past `maxMulti`; on update and patch it is a 400.
 */
function validateBody(validate: Validate, resource: ResolvedResource): Hook {
  return (context) => {
    const data = context.data ?? {}
    const creates = context.method === 'create' || context.method === 'upsert'
    if (!Array.isArray(data)) {
      context.data = validate(creates ? data : withoutOwnId(resource, data, context.id))
      return
    }
    if (!creates) throw badField('body', 'must be an object: one record changes at a time')
    multiLimit(
      resource,
      'create',
      data.length,
      (context.service as { options?: { multi?: MultiOption } }).options?.multi
    )
    context.data = data.map((record, index) => {
      try {
        return validate(record)
      } catch (error) {
        throw atRecord(error, index)
      }
    })
  }
}

/**
 * A change's body may carry the record's own id, as Feathers clients send a record back whole; the id is
 * the path's, so it is dropped. Any other id would move the record: a 400, never silently ignored.
 */
function withoutOwnId(resource: ResolvedResource, data: Record<string, unknown>, id: unknown) {
  const name = resource.idField.name
  if (!data || typeof data !== 'object' || !(name in data)) return data
  if (id === null || id === undefined || String(data[name]) !== String(id)) {
    throw badField(`body.${name}`, `cannot change: a record keeps its id (${name} ${String(id)} in the path)`)
  }
  const { [name]: _ownId, ...rest } = data
  return rest
}

/** A validation error of one record of a multi create, with its fields (and message) under `body.<index>`. */
function atRecord(error: unknown, index: number) {
  return withFieldsRenamed(
    error,
    (field) => field.replace(/^body/, `body.${index}`),
    (fields) => `Body is invalid: ${fields.map((entry) => `${entry.field} ${entry.message}`).join(', ')}`
  )
}

/**
 * The hooks the plugin puts on every resource service, before any hook of the application's: guards first,
 * then body validation, then (on writes) the references the body sets. `authorize` and `defaultFilter` are
 * not hooks: the service applies them when the method runs, after every hook (see `callScope`).
 */
export function resourceHooks(resource: ResolvedResource): Record<string, Array<Guard | Hook>> {
  const { definition } = resource
  const guards = methodGuards(resource)
  const body = { prefix: 'body', what: 'Body' }
  const validateCreate = validateBody(compileValidator(createSchemaOf(resource), body), resource)
  const validateUpdate = validateBody(compileValidator(updateSchemaOf(resource), body), resource)
  const references = checkReferences(resource)
  const hooks: Record<string, Array<Guard | Hook>> = {
    find: guards.find,
    get: guards.get,
    aggregate: guards.aggregate,
    create: [...guards.create, validateCreate, references],
    update: [...guards.update, definition.update?.replace ? validateCreate : validateUpdate, references],
    patch: [...guards.patch, validateUpdate, references],
    remove: guards.remove
  }
  if (resource.upsertKey) {
    const validateUpsert = validateBody(compileValidator(upsertSchemaOf(resource), body), resource)
    hooks.upsert = [...guards.upsert, validateUpsert, references]
  }
  return hooks
}
