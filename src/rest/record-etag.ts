import type { Context } from '../common/koa'
import type { ResourceRecord } from '../model/records'
import type { ResolvedResource } from '../resource/resolved'
import { answeringHeaders, listsTag, tag, type ResolvedCaching } from '../feathers/conditional-read'
import { versionTag } from '../service/record-version'

/** The entity tag of a record of a versioned resource, when the answer holds its version. */
function recordTag(resource: ResolvedResource, record: ResourceRecord) {
  const version = resource.version && record[resource.version.field.name]
  return version === undefined || version === null ? undefined : versionTag(version)
}

/** A single-record answer (read or write) of a versioned resource carries its version as `ETag`. */
export function tagRecord(ctx: Context, resource: ResolvedResource, record: ResourceRecord) {
  const etag = recordTag(resource, record)
  if (etag) ctx.set('ETag', etag)
  return etag
}

/**
 * A versioned record's read: its `ETag` is its version, the tag `If-Match` takes, so `If-None-Match` is
 * answered after the read (one statement, under the caller's scope like any read): 304 while the stored
 * record is the version the client holds. (Unversioned records are tagged by the write generation instead,
 * before anything runs: see `feathers/conditional-read.ts`.)
 */
export async function versionedRead(
  ctx: Context,
  resource: ResolvedResource,
  caching: ResolvedCaching,
  read: () => Promise<ResourceRecord>,
  serialize: (record: ResourceRecord) => unknown
) {
  const record = await read()
  const etag = caching.enabled ? tagRecord(ctx, resource, record) : undefined
  if (etag) {
    // The version is the same for every caller; what a caller is shown of it may depend on any header.
    tag(ctx, caching, etag, answeringHeaders(ctx, caching))
    if (listsTag(ctx.get('if-none-match'), etag)) {
      ctx.status = 304
      return
    }
  }
  ctx.body = serialize(record)
}
