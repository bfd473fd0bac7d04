import type { HookContext } from '@feathersjs/feathers'
import type { ResolvedResource } from '../resource/resolve'
import { createSchemaOf, updateSchemaOf } from '../resource/input-schemas'
import { compileValidator } from '../validation/validator'
import { andFilters, strictFilter } from '../query/filters'
import type { Guard } from '../resource/definition'
import type { Filter } from '../query/model'
import type { ResourceParams } from './resource-service'
import { checkReferences } from './references'

type Context = HookContext & { params: ResourceParams }
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Hook = (context: HookContext<any, any>) => void | Promise<void>

/** Collection methods, which `defaultFilter` narrows as well. */
const COLLECTION_METHODS = ['find', 'aggregate']

/**
 * Narrows every call to what the caller may see: the resource's `authorize(context)` filter (or its denial)
 * and, for collections, `defaultFilter`. Both go to `params.scope`, which the service ANDs into every
 * statement, so no client filter and no later hook that replaces `query.filter` can widen them. The
 * authorization filter is read strictly: a value it misses matches nothing instead of everything.
 */
function scope(resource: ResolvedResource): Hook {
  const { authorize } = resource.definition
  const narrow = (context: Context, rule: Filter | undefined) => {
    const authorized = rule ? strictFilter(rule, resource.idField.name) : undefined
    const collection = COLLECTION_METHODS.includes(context.method) && !context.params.lookup
    const defaultFilter = collection ? resource.query.defaultFilter : undefined
    // Nothing to narrow: the params stay as they are (a copy per call is measurable on a primary-key read).
    if (!authorized && !defaultFilter) return
    context.params = { ...context.params, scope: andFilters(context.params.scope, authorized, defaultFilter) }
  }
  // Without an authorize rule the hook stays synchronous: no promise per call.
  if (!authorize) return (context: Context) => narrow(context, undefined)
  return async (context: Context) => narrow(context, (await authorize(context)) ?? undefined)
}

function validateBody(validate: (data: unknown) => Record<string, unknown>): Hook {
  return (context: Context) => {
    context.data = validate(context.data ?? {})
  }
}

/**
 * The hooks the plugin puts on every resource service, before any hook of the application's:
 * guards first, then body validation, then the scope, then (on writes) the references the body sets.
 */
export function resourceHooks(resource: ResolvedResource): Record<string, Array<Guard | Hook>> {
  const { definition } = resource
  const common: Guard[] = definition.guards ?? []
  const read = [...common, ...(definition.read?.guards ?? [])]
  const validateCreate = compileValidator(createSchemaOf(resource), { prefix: 'body', what: 'Body' })
  const validateUpdate = compileValidator(updateSchemaOf(resource), { prefix: 'body', what: 'Body' })
  const scoped = scope(resource)
  const references = checkReferences(resource)
  return {
    find: [...read, scoped],
    get: [...read, scoped],
    aggregate: [...read, scoped],
    create: [...common, ...(definition.create?.guards ?? []), validateBody(validateCreate), scoped, references],
    patch: [...common, ...(definition.update?.one?.guards ?? []), validateBody(validateUpdate), scoped, references],
    remove: [...common, ...(definition.delete?.one?.guards ?? []), scoped]
  }
}
