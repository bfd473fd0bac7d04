import type { PageTotal } from './store'
import { badField } from '../common/errors'
import type { ResolvedField } from '../resource/resolved'
import type { ResourceQuery } from '../model/query'
import type { Page, PartitionedPages } from '../model/page'
import type { ResourceParams, ResourceRecord } from '../model/records'
import { keyName } from '../query/shape-key'
import { storedColumn } from '../query/sql-target'
import type { ParsedFilter } from '../query/parsed-filter'
import { orderKey, orderSql, sortPlan, type SortTerm } from '../query/compile-sort'
import {
  applyRelationSorts,
  joinsRelations,
  sortScopes,
  type RelationSorts,
  type SortScopes
} from '../query/relation-sort'
import { projection, type Projection } from '../query/projection'
import { PARTITION, PARTITION_TOTAL, type Link } from '../query/read-statements'
import {
  checkPaging,
  finishKeysetPage,
  finishKeysetPartitions,
  keysetReading,
  pageOf,
  partitionsOf,
  totalFromPage
} from '../query/paging'
import { decodeValue } from '../resource/codec'
import type { ResourceStore } from './store'

/**
 * The records of a call in the query model: every one as an array without paging, a `Page` with it (offset
 * or keyset), one page per partition with `partitionBy` or `through`.
 */
export async function findRecords(
  store: ResourceStore,
  params: ResourceParams
): Promise<Page<ResourceRecord> | ResourceRecord[] | PartitionedPages<ResourceRecord>> {
  const query = params.query ?? {}
  if (query.partitionBy || query.through) return findPartitioned(store, params, query)

  const { terms, relations } = sortOf(store, query)
  // A keyset page reads its last record's sort keys.
  const fields = projection(store.resource, query.select, query.keyset ? terms.map((term) => term.field) : [])
  const [visible, scopes] = await Promise.all([
    store.visible(params, query.filter),
    relationSortScopes(store, params, relations)
  ])
  if (query.keyset) return keysetPage(store, params, query, visible, fields, terms)

  const decode = store.decoder(fields)
  const order = orderSql(terms)
  const readValues = scopes ? [...visible.values, ...scopes.values] : visible.values
  const sort = { relations, scopes, at: visible.values.length }
  const orderedPage = (bound: readonly unknown[]) =>
    store.statements
      .select(sortedTable(store, params, sort, bound), visible, fields, bound)
      .orderByRaw(order.sql, order.bindings)
  const shape = `${fields.key}|${orderKey(terms)}|${visible.key}|${scopes?.key ?? ''}`
  if (!query.paging) return (await store.run(params, `all|${shape}`, readValues, orderedPage)).map(decode)

  const { limit, offset } = checkPaging(query.paging)
  const filterValues = readValues.length
  // An exact count not kept from before is read with the page, by a subquery of its statement: one round trip.
  const reuse = query.totalCount && exactCount(store) ? store.countReuse(params, visible) : undefined
  const together = reuse !== undefined && reuse.known === undefined
  // An estimate, where the pool can lend a second connection, runs beside the page.
  const counting =
    query.totalCount && !reuse && store.countsAlongside(params) ? store.pageTotal(params, visible) : undefined
  // The count binds the filter's values again (a compiled statement binds each value once), then come LIMIT
  // (one row more than asked tells whether a next page exists without counting) and OFFSET (knex leaves out 0).
  const countValues = together ? visible.values : []
  const limitAt = filterValues + countValues.length
  const values = [...readValues, ...countValues, limit + 1, ...(offset > 0 ? [offset] : [])]
  const reading = store.run(
    params,
    `${offset > 0 ? 'page-offset' : 'page'}${together ? '-counted' : ''}|${shape}`,
    values,
    (bound) => {
      const ordered = orderedPage(bound)
      if (together) {
        const countBound = bound.slice(filterValues, limitAt)
        ordered.select(store.statements.count(store.table(params), visible, countBound).as(PAGE_TOTAL))
      }
      const page = ordered.limit(bound[limitAt] as number)
      return offset > 0 ? page.offset(bound[limitAt + 1] as number) : page
    },
    limitAt
  )
  const [rows, counted] = await Promise.all([reading, counting])
  const page = pageOf(rows, limit, offset, decode)
  if (!query.totalCount) return page
  // A page that ends the records tells their number exactly, which beats an estimate.
  const exact = totalFromPage(rows.length, limit, offset)
  if (exact !== undefined) return withTotal(page, { total: exact })
  if (reuse?.known !== undefined) return withTotal(page, { total: reuse.known })
  if (together && rows.length > 0) {
    const total = Number(rows[0][PAGE_TOTAL])
    reuse!.keep(total)
    return withTotal(page, { total })
  }
  return withTotal(page, counted ?? (await store.pageTotal(params, visible)))
}

/** The sort of a read: the client's or the resource's default, with the relations it joins. */
function sortOf(store: ResourceStore, query: ResourceQuery) {
  const plan = sortPlan(store.Model, store.target, store.sortingOf(query), store.limits)
  if (query.keyset && joinsRelations(plan.relations)) {
    const index = plan.terms.findIndex((term) => term.joinedKey)
    throw badField(
      `sorting.${index}.field`,
      'sorts by related records, which keyset cursors cannot page by: page by offset'
    )
  }
  return plan
}

/** What the caller may read of the resources a sort joins; undefined when it joins none. */
function relationSortScopes(store: ResourceStore, params: ResourceParams, relations: RelationSorts) {
  if (!joinsRelations(relations)) return undefined
  return sortScopes(relations, (resources) => store.joinScopes(params, resources))
}

/** The call's table with the sort's joins, their scopes' values bound after the filter's (`bound[at]` on). */
function sortedTable(
  store: ResourceStore,
  params: ResourceParams,
  sort: { relations: RelationSorts; scopes?: SortScopes; at: number },
  bound: readonly unknown[]
) {
  const table = store.table(params)
  if (!sort.scopes) return table
  const { relations, scopes, at } = sort
  return applyRelationSorts(store.knex(params), table, store.target, relations, scopes, bound, at)
}

/**
 * The `paging.limit` records after `query.keyset.after` (or before its `before`). Unlike an offset, a
 * keyset costs the same wherever the page lies, so reading every record page by page (the CSV export)
 * costs about what one statement would, without holding a connection or the event loop for all of them.
 */
async function keysetPage(
  store: ResourceStore,
  params: ResourceParams,
  query: ResourceQuery,
  visible: ParsedFilter,
  fields: Projection,
  terms: SortTerm[]
): Promise<Page<ResourceRecord>> {
  const { limit } = checkPaging(query.paging ?? { limit: Number.NaN })
  if (limit < 1) throw badField('paging.limit', 'a keyset page needs a limit of at least 1')
  const reading = keysetReading(query, terms, store.target.dialect)
  const { readTerms, condition } = reading
  const order = orderSql(readTerms)
  const conditionAt = visible.values.length
  // One row more than asked tells whether more records lie beyond the page.
  const values = [...visible.values, ...(condition?.values ?? []), limit + 1]
  const limitAt = values.length - 1
  const shape = `keyset|${fields.key}|${orderKey(readTerms)}|${condition?.key ?? ''}|${visible.key}`
  const rows = await store.run(
    params,
    shape,
    values,
    (bound) => {
      const builder = store.statements.select(store.table(params), visible, fields, bound)
      condition?.apply(builder, bound, conditionAt)
      return builder.orderByRaw(order.sql, order.bindings).limit(bound[limitAt] as number)
    },
    limitAt
  )
  const page = finishKeysetPage(pageOf(rows, limit, 0, store.decoder(fields)), reading, terms)
  if (query.totalCount) withTotal(page, await store.pageTotal(params, visible))
  return page
}

/** One page per distinct value of `partitionBy` (or per parent of a many-to-many read) in a single statement. */
async function findPartitioned(
  store: ResourceStore,
  params: ResourceParams,
  query: ResourceQuery
): Promise<PartitionedPages<ResourceRecord>> {
  const link = query.through ? await store.link(params, query.through) : undefined
  const partitionField = link ? link.foreignKey : store.resource.fieldMap.get(query.partitionBy!)
  if (!partitionField || partitionField.computed)
    throw badField('partitionBy', `unknown field "${query.partitionBy}"`)
  const { limit, offset } = checkPaging(query.paging ?? { limit: Number.MAX_SAFE_INTEGER })
  const { terms, relations } = sortOf(store, query)
  const keyset = query.keyset ? keysetReading(query, terms, store.target.dialect) : undefined
  const readTerms = keyset?.readTerms ?? terms
  const condition = keyset?.condition
  const partition = storedColumn(link ? link.target : store.target, partitionField)
  const partitionKey = link ? PARTITION : partitionField.column
  const keysetFields = keyset ? terms.map((term) => term.field) : []
  const fields = projection(
    store.resource,
    query.select,
    link ? keysetFields : [partitionField, ...keysetFields]
  )
  const [visible, scopes] = await Promise.all([
    store.visible(params, query.filter, link),
    relationSortScopes(store, params, relations)
  ])
  const sortValues = scopes?.values ?? []
  const sort = { relations, scopes, at: visible.values.length }
  // A keyset page's rows start at its cursor: its partitions' totals are counted apart, below.
  const totals = !!query.totalCount && !keyset
  const read = {
    visible,
    fields,
    link,
    partition,
    partitionKey,
    order: orderSql(readTerms),
    totals,
    condition,
    joinedValues: sortValues.length
  }
  const shape = [
    'partitioned',
    fields.key,
    linkShape(link),
    keyName(partitionField),
    orderKey(readTerms),
    query.totalCount ? 'total' : '',
    condition ? `keyset ${condition.key}` : '',
    visible.key,
    scopes?.key ?? ''
  ].join('|')
  const values = [...visible.values, ...sortValues, ...(condition?.values ?? []), offset, offset + limit + 1]
  const rows = await store.run(params, shape, values, (bound) =>
    store.statements.partitioned(store.knex(params), sortedTable(store, params, sort, bound), read, bound)
  )
  const decode = store.decoder(fields)
  const { data, partitions } = partitionsOf(
    rows,
    partitionField,
    partitionKey,
    limit,
    !!query.totalCount,
    decode
  )
  if (!keyset) return { data, skip: offset, partitions }
  const counted = query.totalCount
    ? await partitionTotals(store, params, visible, partitionField, link)
    : undefined
  finishKeysetPartitions(data, partitions, keyset, counted)
  return { data, skip: offset, partitions, keysetFields: keyset.fields }
}

/** The number of visible records per value of `partitionField`, in one grouped count. */
async function partitionTotals(
  store: ResourceStore,
  params: ResourceParams,
  visible: ParsedFilter,
  partitionField: ResolvedField,
  link?: Link
) {
  const through = linkShape(link)
  const shape = `partition-totals|${through}|${keyName(partitionField)}|${visible.key}`
  const rows = await store.run(params, shape, visible.values, (bound) =>
    store.statements.partitionTotals(store.table(params), visible, partitionField, bound, link)
  )
  const keyOf = (row: ResourceRecord) => String(decodeValue(partitionField.kind, row[partitionField.column]))
  return new Map(rows.map((row) => [keyOf(row), Number(row[PARTITION_TOTAL])]))
}

/** The part of a statement's shape key that a many-to-many read's links make: which links, by which key. */
function linkShape(link: Link | undefined) {
  return link ? `through ${keyName(link.target.resource)}.${keyName(link.otherKey)}` : ''
}

function withTotal(page: Page<ResourceRecord>, { total, estimated }: PageTotal) {
  page.total = total
  if (estimated) page.totalIsEstimate = true
  return page
}

/** The column of a page's rows that holds the count read with it. */
const PAGE_TOTAL = '__fq_total'

const exactCount = (store: ResourceStore) => store.resource.query.countStrategy === 'exact'
