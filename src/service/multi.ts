import { BadRequest, MethodNotAllowed } from '@feathersjs/errors'
import { DEFAULTS } from '../resource/defaults'
import type { ResolvedResource } from '../resource/resolved'

/** Methods that change several records at once when `multi` allows it. */
export type MultiMethod = 'create' | 'patch' | 'remove'

/** The largest number of records one multi create, patch or remove may change unless `maxMulti` says. */
export const DEFAULT_MAX_MULTI = DEFAULTS.maxMulti

export type MultiOption = boolean | MultiMethod[] | undefined

/**
 * Whether the resource lets one call change several records with `method` (Feathers' `multi`): the
 * definition's, or the service's `options.multi` where a Feathers user changed it.
 */
export function allowsMulti(
  resource: ResolvedResource,
  method: MultiMethod,
  multi = resource.definition.multi
) {
  return multi === true || (Array.isArray(multi) && multi.includes(method))
}

/** The most records one call may change on several records of `resource`: its `maxMulti`, or the default. */
export function maxMultiOf(resource: ResolvedResource) {
  return resource.definition.maxMulti ?? DEFAULT_MAX_MULTI
}

/**
 * The most records one call of `method` may change on several records: a 405 when `multi` does not allow it,
 * a 400 when `count` records are more than that.
 */
export function multiLimit(
  resource: ResolvedResource,
  method: MultiMethod,
  count?: number,
  multi: MultiOption = resource.definition.multi
) {
  const maxMulti = maxMultiOf(resource)
  if (!allowsMulti(resource, method, multi)) {
    // Feathers' adapters' words, which Feathers clients may know.
    throw new MethodNotAllowed(`Can not ${method} multiple entries`, {
      resource: resource.name,
      option: 'multi'
    })
  }
  if (count !== undefined && count > maxMulti) {
    throw new BadRequest(
      `${resource.name}: ${method} changes at most ${maxMulti} records at once (${count} given)`
    )
  }
  return maxMulti
}
