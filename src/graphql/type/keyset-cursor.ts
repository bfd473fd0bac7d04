import { badInput, type FieldError } from '../../common/errors'
import type { PageSizes } from '../../resource/resolved'
import type { Filter, Keyset, SortField } from '../../model/query'
import { canonicalJson, keysetDigest } from '../../query/keyset-digest'
import { checkCursorPaging, pageSize, present, type CursorPaging } from './cursor'

/**
 * Keyset cursors: a record's place in the order, as the values of its sort fields and id, in nestjs-query's
 * shape `base64(JSON({type: 'keyset', fields: [{field, value}, ...]}))`, plus two digests:
 * - `scope`, of the connection, sorting and filter the cursor was made for: used with another, it is a 400
 *   that says so rather than a page of some other order;
 * - `check`, of the scope and the values: a cursor changed by hand is a 400 too.
 * The digests are no secret. Nothing depends on them for safety: the service compares a cursor's values only
 * with the sort columns, as bound parameters, inside the request's filter and the caller's authorization,
 * so no cursor selects what the caller could not select anyway.
 */

interface CursorField {
  field: string
  value: unknown
}

interface KeysetCursorPayload {
  type: 'keyset'
  fields: CursorField[]
  scope: string
  check: string
}

/** What a cursor belongs to: one connection (by type name), one sorting, one filter. */
export function keysetScope(connection: string, sorting: SortField[], filter: Filter | undefined) {
  return keysetDigest(canonicalJson({ connection, sorting, filter: filter ?? {} }))
}

const checkOf = (scope: string, fields: CursorField[]) => keysetDigest(`${scope}|${canonicalJson(fields)}`)

/** The cursor of `record` in a keyset page whose order is placed by `fields`. */
export function encodeKeysetCursor(
  scope: string,
  fields: readonly string[],
  record: Record<string, unknown>
) {
  const values = fields.map((field) => ({ field, value: record[field] ?? null }))
  const payload: KeysetCursorPayload = {
    type: 'keyset',
    fields: values,
    scope,
    check: checkOf(scope, values)
  }
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64')
}

/** The position a cursor holds (values by field name); every way it may be wrong is a 400 naming `field`. */
function decodeKeysetCursor(cursor: string, scope: string, field: string, errors: FieldError[]) {
  const invalid = (message = 'is not a valid cursor') => {
    errors.push({ field, message })
    return undefined
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(cursor)) return invalid()
  let payload: KeysetCursorPayload
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64').toString('utf8'))
  } catch {
    return invalid()
  }
  const fields = payload?.fields
  const wellFormed =
    payload?.type === 'keyset' &&
    typeof payload.scope === 'string' &&
    typeof payload.check === 'string' &&
    Array.isArray(fields) &&
    fields.every((entry) => entry && typeof entry === 'object' && typeof entry.field === 'string')
  if (!wellFormed) return invalid()
  if (payload.check !== checkOf(payload.scope, fields))
    return invalid('is not a valid cursor (it was changed)')
  if (payload.scope !== scope) {
    return invalid('was made for another sorting or filter: ask for the first page again with these')
  }
  return Object.fromEntries(fields.map((entry) => [entry.field, entry.value]))
}

/** A keyset request: `limit` records from where `keyset` says. */
export interface KeysetWindow {
  limit: number
  keyset: Keyset
}

/**
 * Relay-style paging by keyset: `first` records after `after` (or from the start), or the `last` records
 * before `before` (or at the end: unlike an offset, the end costs no count to find).
 */
export function keysetWindow(
  paging: CursorPaging | null | undefined,
  sizes: PageSizes,
  scope: string
): KeysetWindow {
  const { first, last, after, before } = checkCursorPaging(paging, { lastAlone: true })
  const errors: FieldError[] = []
  if (present(last) || present(before)) {
    const limit = pageSize(last, 'paging.last', sizes, errors)
    const position = present(before) ? decodeKeysetCursor(before, scope, 'paging.before', errors) : undefined
    if (errors.length) throw badInput(errors)
    return { limit, keyset: position ? { before: position, backward: true } : { backward: true } }
  }
  const limit = pageSize(first, 'paging.first', sizes, errors)
  const position = present(after) ? decodeKeysetCursor(after, scope, 'paging.after', errors) : undefined
  if (errors.length) throw badInput(errors)
  return { limit, keyset: position ? { after: position } : {} }
}
