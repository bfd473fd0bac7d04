import { BadRequest, NotFound } from '@feathersjs/errors'
import type { HookContext } from '@feathersjs/feathers'
import { badField } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import type { ResourceParams } from '../model/records'

/**
 * Before create and patch: each one-relation reference the body sets must name a record the caller may read.
 * The lookup is an ordinary `get` on the related service with the caller's params, so that resource's guards
 * and `authorize` decide; otherwise a client could attach records to, and probe the ids of, records it
 * cannot see. A missing or hidden target is the same 400, naming the field.
 */
export function checkReferences(resource: ResolvedResource) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return async (context: HookContext<any, any>) => {
    const records = (Array.isArray(context.data) ? context.data : [context.data ?? {}]) as Record<
      string,
      unknown
    >[]
    // The caller's identity and transport, not this call's query or scope.
    const { query: _query, scope: _scope, ...caller } = context.params as ResourceParams
    for (const [index, data] of records.entries()) {
      const at = Array.isArray(context.data) ? `body.${index}` : 'body'
      for (const relation of resource.one) {
        const name = relation.foreignKey.name
        const value = data[name]
        if (value === undefined || value === null) continue
        try {
          await context.app.service(relation.target.basePath).get(value, caller)
        } catch (error) {
          // Missing, hidden, or not even a valid id of the target: all the same mistake in this field.
          if (!(error instanceof NotFound) && !(error instanceof BadRequest)) throw error
          throw badField(`${at}.${name}`, `names no ${relation.target.name} that you may see (id '${value}')`)
        }
      }
    }
  }
}
