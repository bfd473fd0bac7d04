import { badInput, type FieldError } from '../../common/errors'
import type { PageSizes } from '../../resource/resolved'

/**
 * Cursors are offset cursors, encoded as nestjs-query encodes them: base64("arrayconnection:" + zero-based index
 * of the record in the ordered, filtered collection). Clients must treat them as opaque. They stay valid as
 * long as the collection does not change in front of them, the usual trade-off of offset paging.
 */
const PREFIX = 'arrayconnection:'

/** Cursors of the first records of any collection: every page of every connection hands out these. */
const CACHED_CURSORS = 10_000
const cursors: string[] = []

const encode = (index: number) => Buffer.from(PREFIX + index, 'utf8').toString('base64')

export function encodeCursor(index: number) {
  return index < CACHED_CURSORS ? (cursors[index] ??= encode(index)) : encode(index)
}

/** The index a cursor stands for; `undefined` when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(cursor)) return undefined
  const match = /^arrayconnection:(0|[1-9]\d{0,14})$/.exec(Buffer.from(cursor, 'base64').toString('utf8'))
  return match ? Number(match[1]) : undefined
}

export interface CursorPaging {
  first?: number | null
  last?: number | null
  after?: string | null
  before?: string | null
}

/** The offset page a cursor request asks for. */
export interface PageWindow {
  limit: number
  offset: number
}

function cursorIndex(cursor: string, field: string, errors: FieldError[]) {
  const index = decodeCursor(cursor)
  if (index === undefined) errors.push({ field, message: 'is not a valid cursor' })
  return index ?? 0
}

export function pageSize(
  value: number | null | undefined,
  field: string,
  sizes: PageSizes,
  errors: FieldError[]
) {
  if (value === null || value === undefined) return sizes.default
  if (!Number.isInteger(value) || value < 1 || value > sizes.max) {
    errors.push({ field, message: `must be between 1 and ${sizes.max}` })
  }
  return value
}

/**
 * The combinations of `first`, `last`, `after` and `before` that make sense: forward with `first`/`after`,
 * backward with `last`/`before`. `last` alone (the end of the collection) only where `lastAlone`: offset
 * cursors cannot find the end without counting, keyset cursors can.
 */
export function checkCursorPaging(paging: CursorPaging | null | undefined, { lastAlone = false } = {}) {
  const { first, last, after, before } = paging ?? {}
  const conflicts: Array<[boolean, FieldError]> = [
    [present(first) && present(last), { field: 'paging.last', message: 'cannot be combined with first' }],
    [present(after) && present(before), { field: 'paging.before', message: 'cannot be combined with after' }],
    [
      present(before) && present(first),
      { field: 'paging.first', message: 'cannot be combined with before (use last)' }
    ],
    [
      present(after) && present(last),
      { field: 'paging.last', message: 'cannot be combined with after (use first)' }
    ],
    [
      !lastAlone && present(last) && ![before, first, after].some(present),
      { field: 'paging.last', message: 'needs a before cursor' }
    ]
  ]
  const errors = conflicts.filter(([applies]) => applies).map(([, error]) => error)
  if (errors.length) throw badInput(errors)
  return { first, last, after, before }
}

export const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined

/**
 * Translates Relay-style paging into an offset window. Forward: `first` records after `after`. Backward: the
 * `last` records before `before`, i.e. from max(0, before - last) up to `before`; the service's extra row
 * (the `before` record itself) then tells whether a next page exists. `last` needs a `before` cursor: the end
 * of the collection is unknown without counting it (as in nestjs-query).
 */
export function pageWindow(paging: CursorPaging | null | undefined, sizes: PageSizes): PageWindow {
  const { first, last, after, before } = checkCursorPaging(paging)
  const errors: FieldError[] = []
  if (present(before)) {
    const size = pageSize(last, 'paging.last', sizes, errors)
    const end = cursorIndex(before, 'paging.before', errors)
    if (errors.length) throw badInput(errors)
    const offset = Math.max(0, end - size)
    return { offset, limit: end - offset }
  }
  const limit = pageSize(first, 'paging.first', sizes, errors)
  const offset = present(after) ? cursorIndex(after, 'paging.after', errors) + 1 : 0
  if (errors.length) throw badInput(errors)
  return { offset, limit }
}
