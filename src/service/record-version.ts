import { BadRequest, FeathersError } from '@feathersjs/errors'
import type { Id, NullableId } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import type { ResourceParams, ResourceRecord } from '../model/records'
import type { ResolvedResource } from '../resource/resolved'

/**
 * Optimistic concurrency (`concurrency.version`): which versions of a record a write may change, named by the
 * caller as HTTP's `If-Match` (the record's `ETag`, `"3"`, several, or `*`), `$ifMatch` in a Feathers query
 * (socket.io sends no headers), `params.ifMatch` from code, or GraphQL's `version`.
 */
export type Precondition = { any: true } | { versions: number[] }

/** A record's entity tag: its version, quoted (strong: the same version is the same stored record). */
export const versionTag = (version: unknown) => `"${version}"`

export class PreconditionFailed extends FeathersError {
  constructor(message: string, data?: unknown) {
    super(message, 'PreconditionFailed', 412, 'precondition-failed', data)
  }
}

export class PreconditionRequired extends FeathersError {
  constructor(message: string) {
    super(message, 'PreconditionRequired', 428, 'precondition-required', undefined)
  }
}

/**
 * The versions an `If-Match` value names: `*`, a list of quoted tags (`"3", "4"`), a bare number (from code or
 * a Feathers query). A weak tag (`W/"3"`) never matches, as HTTP's strong comparison has it, nor does a tag
 * that is no version at all: both are kept as a precondition nothing satisfies, never dropped.
 */
function parsePrecondition(value: unknown): Precondition {
  if (typeof value === 'number') return { versions: Number.isInteger(value) ? [value] : [] }
  if (typeof value !== 'string') throw new BadRequest('If-Match must be an entity tag, a list of them, or *')
  if (value.trim() === '*') return { any: true }
  const versions: number[] = []
  for (const candidate of value.split(',')) {
    const match = /^\s*"(\d{1,15})"\s*$/.exec(candidate) ?? /^\s*(\d{1,15})\s*$/.exec(candidate)
    if (match) versions.push(Number(match[1]))
  }
  return { versions }
}

/** Where the caller named a precondition: the REST request's header, a Feathers query's `$ifMatch`, code. */
function namedPrecondition(params: ResourceParams): unknown {
  if (params.ifMatch !== undefined) return params.ifMatch
  // Also beside a query model (REST's and GraphQL's calls): a hook that adds `$ifMatch` means it there too.
  const query = params.query as Record<string, unknown> | undefined
  if (query?.$ifMatch !== undefined) return query.$ifMatch
  // Only REST's: a GraphQL request's headers are the whole document's, not one mutation's.
  const header = params.provider === 'rest' ? params.headers?.['if-match'] : undefined
  return header === '' ? undefined : header
}

/**
 * The precondition of a write to `id` (null: several records), checked for what it asks: one record only;
 * on a resource without versions only `*` (no tag of its records can match, so any other is a 412 up front);
 * required where the resource says so, for clients.
 */
export function preconditionOf(
  resource: ResolvedResource,
  params: ResourceParams,
  id: NullableId
): Precondition | undefined {
  const named = namedPrecondition(params)
  if (named === undefined || named === null) {
    if (resource.version?.required && params.provider && id !== null) {
      throw new PreconditionRequired(
        `${resource.name} records are changed by version: send If-Match with the record's ETag ` +
          '(GraphQL: version; Feathers: $ifMatch)'
      )
    }
    return undefined
  }
  if (id === null) throw new BadRequest('If-Match applies to one record: write several without it')
  const precondition = parsePrecondition(named)
  if ('versions' in precondition && !resource.version) {
    throw new PreconditionFailed(
      `${resource.name} records have no version to match (only If-Match: * applies)`
    )
  }
  return precondition
}

/**
 * The versions a read of one record asks for (RFC 9110: `If-Match` holds for a GET too), so that a hook's
 * `context.service.get(context.id, context.params)` within a conditional write checks what the write will:
 * undefined when it names none or `*`. On a resource without versions no tag can match.
 */
export function readPrecondition(resource: ResolvedResource, params: ResourceParams): number[] | undefined {
  const named = namedPrecondition(params)
  if (named === undefined || named === null) return undefined
  const precondition = parsePrecondition(named)
  if ('any' in precondition) return undefined
  if (!resource.version) {
    throw new PreconditionFailed(
      `${resource.name} records have no version to match (only If-Match: * applies)`
    )
  }
  return precondition.versions
}

/** Whether a record read is in one of the versions its caller named. */
export function isVersionOf(resource: ResolvedResource, record: ResourceRecord, versions: number[]) {
  return versions.includes(Number(record[resource.version!.field.name]))
}

/** Limits an UPDATE or DELETE of one record to the versions the precondition names. */
export function matchingVersion(
  builder: Knex.QueryBuilder,
  resource: ResolvedResource,
  precondition: Precondition | undefined
) {
  if (!precondition || 'any' in precondition || !resource.version) return builder
  return builder.whereIn(resource.version.field.column, precondition.versions)
}

/** The 412 of a record that exists for the caller but in another version than the one it named. */
export function staleRecord(resource: ResolvedResource, id: Id) {
  return new PreconditionFailed(
    `${resource.name} '${id}' has changed since you read it: read it again and reapply your change`
  )
}

/** On create: the first version. On a change: one more than the stored one, computed by the database. */
export function withVersion(
  knex: Knex,
  resource: ResolvedResource,
  row: ResourceRecord,
  write: 'create' | 'change'
) {
  const version = resource.version?.field.column
  if (!version) return row
  return { ...row, [version]: write === 'create' ? 1 : knex.raw('?? + 1', [version]) }
}
