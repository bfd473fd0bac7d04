import type { Filter } from '../model/query'
import type { ResourceParams } from '../model/records'
import type { ResolvedResource } from '../resource/resolved'
import { copyWith } from '../common/copy-with'
import { callContext, type ScopeCall } from './call-scope'
import { readGuards } from './guards'

/** The caller's identity and transport (user, authentication, provider, headers, transaction), not the call's query. */
export function callerOf(params: ResourceParams): ResourceParams {
  const { query: _query, scope: _scope, lookup: _lookup, paginate: _paginate, ...caller } = params
  return copyWith(caller, { queryModel: true, query: {} })
}

/**
 * What a `find` by a caller may read of the resource: its guards run and its `authorize` asked (method
 * `find`, the caller's params), with `defaultFilter`. Relation filters and many-to-many reads of other
 * resources apply it to this resource's records, so that they reveal nothing its own `find` would not.
 */
export function readScope(
  resource: ResolvedResource,
  registered: () => unknown,
  scoped: (call: ScopeCall) => ResourceParams | Promise<ResourceParams>
) {
  const guards = readGuards(resource)
  return async (caller: ResourceParams): Promise<Filter | undefined> => {
    const context = callContext(registered(), { method: 'find', params: caller })
    for (const guard of guards) {
      const result = await guard(context)
      if (result && result !== context) Object.assign(context, result)
    }
    return (await scoped({ method: 'find', params: context.params as ResourceParams })).scope
  }
}
