import { NotAuthenticated } from '@feathersjs/errors'
import {
  createContext,
  defaultServiceArguments,
  type HookContext,
  type NullableId
} from '@feathersjs/feathers'
import type { ResolvedResource } from '../resource/resolved'
import { andFilters, strictFilter } from '../query/filters'
import type { ResourceParams } from '../model/records'
import { copyWith } from '../common/copy-with'

/** Collection methods, which `defaultFilter` narrows as well. */
const COLLECTION_METHODS = ['find', 'aggregate']

export interface ScopeCall {
  method: string
  params: ResourceParams
  id?: NullableId
  data?: unknown
}

/**
 * A hook context of a call made outside the hook chain (for `authorize`). Its id, data and params read the
 * call's arguments, which are given in the method's order.
 */
export function callContext(service: unknown, call: ScopeCall): HookContext {
  const names = (defaultServiceArguments as Record<string, string[]>)[call.method] ?? ['data', 'params']
  const values: Record<string, unknown> = { id: call.id, data: call.data, params: call.params }
  return createContext(service as never, call.method, { arguments: names.map((name) => values[name]) })
}

/**
 * Narrows a call to what the caller may see: the resource's `authorize(context)` filter (or its denial) and,
 * for collections, `defaultFilter`. Both go to `params.scope`, which the service ANDs into every statement, so
 * no client filter and no hook that replaces `query.filter` can widen them.
 *
 * It runs when the method runs, after every hook, so that `authenticate('jwt')` protects the call wherever
 * the application put it (around, before.all or before.find). `authorize` gets a hook context of the call
 * with the params and data as the hooks left them.
 *
 * The rule is read strictly: a comparison missing its value matches nothing. When that happens on a call
 * nobody authenticated, the rule evidently needed a user, and the answer is a 401 rather than an empty result.
 */
export function callScope(resource: ResolvedResource, service: () => unknown) {
  const { authorize } = resource.definition
  const { defaultFilter } = resource.query
  const narrow = (call: ScopeCall, authorized: ReturnType<typeof andFilters>) => {
    const collection = COLLECTION_METHODS.includes(call.method) && !call.params.lookup
    const applied = collection ? defaultFilter : undefined
    // Nothing to narrow: the params stay as they are (a copy per call is measurable on a primary-key read).
    if (!authorized && !applied) return call.params
    return copyWith(call.params, { scope: andFilters(call.params.scope, authorized, applied) })
  }
  if (!authorize) return (call: ScopeCall): ResourceParams => narrow(call, undefined)
  return async (call: ScopeCall): Promise<ResourceParams> => {
    const rule = await authorize(callContext(service(), call))
    if (!rule) return narrow(call, undefined)
    const { filter, complete } = strictFilter(rule, resource)
    if (!complete && !call.params.authenticated && !(call.params as { user?: unknown }).user) {
      throw new NotAuthenticated(`Reading ${resource.name} records needs an authenticated user`)
    }
    return narrow(call, filter)
  }
}
