import type { Paginated } from '@feathersjs/feathers'
import { copyWith } from '../common/copy-with'
import { REST_DEFAULT_RESULT_SIZE } from '../resource/defaults'
import { pageSizes, type ResolvedResource } from '../resource/resolved'
import type { ResourceQuery } from '../model/query'
import type { Page } from '../model/page'
import type { ResourceParams, ResourceRecord } from '../model/records'
import type { FeathersRequest } from '../query/feathers-syntax'
import { findRecords } from './find'
import type { ResourceStore } from './store'

export interface FeathersPageSizes {
  default: number
  max: number
}

/** Feathers callers' page sizes: the resource's REST default and maximum. */
export function feathersPageSizes(resource: ResolvedResource): FeathersPageSizes {
  const sizes = pageSizes(resource, REST_DEFAULT_RESULT_SIZE)
  return { default: sizes.default, max: sizes.max }
}

/**
 * A Feathers caller's find: `{ total, limit, skip, data }` with the call's `paginate` (or the resource's
 * sizes), or every matching record as an array with `paginate: false`.
 */
export async function findFeathersPage(
  store: ResourceStore,
  params: ResourceParams,
  request: FeathersRequest,
  sizes: FeathersPageSizes | false
): Promise<Paginated<ResourceRecord> | ResourceRecord[]> {
  const query: ResourceQuery = { filter: request.filter, sorting: request.sorting, select: request.select }
  const paginate = params.paginate ?? sizes
  if (paginate === false) {
    const paging = request.limit !== undefined || request.skip > 0
    if (paging) query.paging = { limit: request.limit ?? Number.MAX_SAFE_INTEGER, offset: request.skip }
    const result = await findRecords(store, copyWith(params, { query }))
    return paging ? (result as Page<ResourceRecord>).data : (result as ResourceRecord[])
  }
  // As Feathers' adapters do: `$limit` above the maximum gets the maximum, which the page's `limit` says.
  const fallback = sizes === false ? undefined : sizes.default
  const limit = Math.min(request.limit ?? paginate.default ?? fallback ?? Infinity, paginate.max ?? Infinity)
  query.paging = { limit, offset: request.skip }
  query.totalCount = true
  const page = (await findRecords(store, copyWith(params, { query }))) as Page<ResourceRecord>
  const answer: Paginated<ResourceRecord> = { total: page.total!, limit, skip: request.skip, data: page.data }
  // Feathers' page has no word for an estimated total; the flag rides beside it, as the REST list's does.
  return page.totalIsEstimate ? Object.assign(answer, { totalIsEstimate: true }) : answer
}
