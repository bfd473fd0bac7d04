import type { HookContext } from '@feathersjs/feathers'
import type { Filter } from '../query/model'
import { andFilters } from '../query/filters'
import type { ResourceParams } from '../service/resource-service'

/**
 * A before hook for `find` that gives the free-form `query` parameter (`params.query.search`) a meaning:
 * every word of it must appear, case-insensitively, in at least one of `fields`.
 * `%` and `_` in the search text keep their LIKE meaning; a backslash is a backslash.
 */
export function searchFields(fields: string[]) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (context: HookContext<any, any>) => {
    const params = context.params as ResourceParams
    const words = (params.query?.search ?? '').split(/\s+/).filter(Boolean)
    if (words.length === 0) return
    const matches: Filter[] = words.map((word) => ({
      or: fields.map((field) => ({ [field]: { iLike: `%${word.replaceAll('\\', '\\\\')}%` } }))
    }))
    context.params = {
      ...params,
      query: { ...params.query, filter: andFilters(params.query?.filter, ...matches) }
    }
  }
}
