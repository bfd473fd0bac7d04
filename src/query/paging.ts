import { badField } from '../common/errors'
import { decodeValue, type RowDecoder } from '../resource/codec'
import type { ResolvedField } from '../resource/resolved'
import type { Dialect } from '../dialect/dialect'
import type { Keyset, OffsetPaging, ResourceQuery } from '../model/query'
import type { Page, Partition } from '../model/page'
import type { ResourceRecord } from '../model/records'
import type { SortTerm } from './compile-sort'
import { encodePosition, keysetCondition, positionOf, reversedTerms } from './keyset'
import { PARTITION_TOTAL } from './read-statements'

/** `paging` checked: safe integers only, since knex would bind 1e20 as a string and read 1e23 as 1. */
export function checkPaging(paging: OffsetPaging) {
  const { limit, offset = 0 } = paging
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw badField('paging.limit', 'must be a non-negative integer')
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw badField('paging.offset', 'must be a non-negative integer')
  return { limit, offset }
}

/** A page of `limit` records from `rows`, read with one row more than asked to tell whether a next page exists. */
export function pageOf(
  rows: ResourceRecord[],
  limit: number,
  skip: number,
  decode: RowDecoder
): Page<ResourceRecord> {
  return { data: rows.slice(0, limit).map(decode), limit, skip, hasNextPage: rows.length > limit }
}

/**
 * The number of records, when a page of `read` rows (asked for `limit` from `offset`) tells it: a page that
 * holds the last record (one not full, and not past the end) says how many there are.
 */
export function totalFromPage(read: number, limit: number, offset: number): number | undefined {
  const last = read <= limit && (read > 0 || offset === 0)
  return last ? offset + read : undefined
}

/** `query.keyset` checked: `{after?}` forward, `{before?, backward: true}` backward. */
function checkKeyset(query: ResourceQuery): Required<Pick<Keyset, 'backward'>> & Keyset {
  const keyset = query.keyset
  if (!keyset || typeof keyset !== 'object' || Array.isArray(keyset)) {
    throw badField('keyset', 'must be {after} or {before, backward: true}')
  }
  const { after, before, backward, ...rest } = keyset
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) throw badField(`keyset.${unknown}`, 'is not part of a keyset')
  if (backward !== undefined && typeof backward !== 'boolean') {
    throw badField('keyset.backward', 'must be a boolean')
  }
  if (backward && after !== undefined) throw badField('keyset.after', 'cannot be combined with backward')
  if (!backward && before !== undefined) throw badField('keyset.before', 'needs backward: true')
  if (query.paging?.offset) throw badField('paging.offset', 'cannot be combined with a keyset')
  return { after, before, backward: backward === true }
}

export type KeysetReading = ReturnType<typeof keysetReading>

/**
 * The keyset a query reads by: the order it reads in (reversed for a backward page) and the condition
 * that starts it after `after` (or before `before`); no condition at the start (or the end).
 */
export function keysetReading(query: ResourceQuery, terms: SortTerm[], dialect: Dialect) {
  const keyset = checkKeyset(query)
  const readTerms = keyset.backward ? reversedTerms(terms) : terms
  const from = keyset.backward ? keyset.before : keyset.after
  const path = keyset.backward ? 'keyset.before' : 'keyset.after'
  const condition =
    from === undefined ? undefined : keysetCondition(readTerms, encodePosition(terms, from, path), dialect)
  return { keyset, readTerms, condition, fields: terms.map((term) => term.field.name) }
}

/** A keyset page's links to its neighbours; read backwards, its records go back into the query's order. */
export function finishKeysetPage(page: Page<ResourceRecord>, reading: KeysetReading, terms: SortTerm[]) {
  const { keyset } = reading
  page.keysetFields = reading.fields
  if (keyset.backward) {
    page.data.reverse()
    page.hasPreviousPage = page.hasNextPage
    page.hasNextPage = keyset.before !== undefined
  } else {
    page.hasPreviousPage = keyset.after !== undefined
    if (page.hasNextPage) page.keyset = { after: positionOf(terms, page.data[page.limit - 1]) }
  }
  return page
}

/**
 * The records and partitions of a partitioned read's rows, which come ordered by partition, then by their
 * number within it: at most `limit` records per partition, `hasNextPage` where it had one more.
 */
export function partitionsOf(
  rows: ResourceRecord[],
  partitionField: ResolvedField,
  partitionKey: string,
  limit: number,
  totals: boolean,
  decode: RowDecoder
) {
  const data: ResourceRecord[] = []
  const partitions: Partition[] = []
  let current: Partition | undefined
  for (const row of rows) {
    // Decoded keys are strings, numbers or booleans: equal keys are ===.
    const key = decodeValue(partitionField.kind, row[partitionKey])
    if (current === undefined || key !== current.key) {
      current = { key, start: data.length, end: data.length, hasNextPage: false }
      if (totals) current.total = Number(row[PARTITION_TOTAL])
      partitions.push(current)
    }
    if (current.end - current.start === limit) {
      current.hasNextPage = true
      continue
    }
    data.push(decode(row))
    current.end = data.length
  }
  return { data, partitions }
}

/** Each partition of a keyset read: its total, its links to its neighbours, its records in the query's order. */
export function finishKeysetPartitions(
  data: ResourceRecord[],
  partitions: Partition[],
  reading: KeysetReading,
  totals: Map<string, number> | undefined
) {
  const { keyset } = reading
  for (const each of partitions) {
    if (totals) each.total = totals.get(String(each.key)) ?? 0
    if (keyset.backward) {
      const reversed = data.slice(each.start, each.end).reverse()
      data.splice(each.start, reversed.length, ...reversed)
      each.hasPreviousPage = each.hasNextPage
      each.hasNextPage = keyset.before !== undefined
    } else {
      each.hasPreviousPage = keyset.after !== undefined
    }
  }
}
