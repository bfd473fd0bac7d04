import type { Knex } from 'knex'
import { placeholderFor, type Dialect } from '../dialect/dialect'
import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import { applyParsedFilter, compare } from './compile-filter'
import type { ParsedFilter } from './parsed-filter'
import { qualified, storedColumn, type SqlTarget } from './sql-target'
import type { Filter } from '../model/query'
import type { Projection } from './projection'
import type { KeysetCondition } from './keyset'
import type { orderSql } from './compile-sort'

/** A many-to-many read's links: the join resource's table under this alias, joined to the read records. */
export const LINK_ALIAS = '__fq_link'
/** The link's key of each record of a many-to-many read, under an alias of its own. */
export const PARTITION = '__fq_partition'
export const ROW_NUMBER = '__row_number'
export const PARTITION_TOTAL = '__partition_total'

/** The links of a many-to-many read, resolved: where they are and which of them the read goes through. */
export interface Link {
  target: SqlTarget
  foreignKey: ResolvedField
  otherKey: ResolvedField
  /** The parents' links within what the caller may read of the join resource. */
  filter: Filter
}

/** The SQL a sorted read orders by. */
export type Order = ReturnType<typeof orderSql>

/** What a partitioned read selects: one window of records per value of `partition`. */
export interface PartitionedRead {
  visible: ParsedFilter
  fields: Projection
  link?: Link
  /** The partition's column, qualified. */
  partition: string
  /** The partition key as the rows carry it: the field's column, or PARTITION for a link's key. */
  partitionKey: string
  order: Order
  /** Each partition's total selected beside its rows. */
  totals: boolean
  condition?: KeysetCondition
  /** Values the table's joins bind (a sort by related records), after the filter's and before the keyset's. */
  joinedValues?: number
}

/**
 * The read statements of one resource, built with knex: each takes the builder of the table (on the
 * caller's transaction or the pool) and the values to bind (the call's, or stand-ins when the statement is
 * compiled once for its shape), and returns the builder with its clauses added.
 */
export class ReadStatements {
  readonly target: SqlTarget
  /** The id's column, qualified. */
  readonly idColumn: string
  /** The quoted, qualified column list of each projection, as SQL. */
  private readonly columnLists = new WeakMap<Projection, string>()

  constructor(
    private readonly knex: Knex,
    resource: ResolvedResource,
    dialect: Dialect
  ) {
    this.target = { resource, dialect, table: resource.table }
    this.idColumn = storedColumn(this.target, resource.idField)
  }

  /** The target of a join resource's table under LINK_ALIAS. */
  linkTarget(join: ResolvedResource): SqlTarget {
    return { resource: join, dialect: this.target.dialect, table: LINK_ALIAS }
  }

  /** Live records only (soft delete), within `visible`. */
  whereVisible(
    builder: Knex.QueryBuilder,
    visible: ParsedFilter,
    bound: readonly unknown[] = visible.values
  ) {
    const { softDeleteColumn, table } = this.target.resource
    if (softDeleteColumn) builder.whereNull(`${table}.${softDeleteColumn}`)
    return applyParsedFilter(builder, this.target, visible, bound)
  }

  /** The read's records joined with their links (each record once per link), live links only. */
  joinLink(builder: Knex.QueryBuilder, link: Link) {
    const { resource, table } = link.target
    builder.join({ [table]: resource.table }, `${table}.${link.otherKey.column}`, this.idColumn)
    if (resource.softDeleteColumn) builder.whereNull(`${table}.${resource.softDeleteColumn}`)
    return builder
  }

  /** SELECT of the projected columns of the live records within `visible` (and the link's, for a link). */
  select(
    table: Knex.QueryBuilder,
    visible: ParsedFilter,
    fields: Projection,
    bound: readonly unknown[] = visible.values,
    link?: Link
  ) {
    const select = table.select(this.knex.raw(this.columnList(fields)))
    // SQL-computed fields as they are (their expressions may bind values of their own), named as columns.
    for (const field of fields.stored) {
      if (!field.expression) continue
      select.select(this.knex.raw('? AS ??', [qualified(this.target, field), field.column]))
    }
    return this.whereVisible(link ? this.joinLink(select, link) : select, visible, bound)
  }

  private columnList(fields: Projection) {
    let columns = this.columnLists.get(fields)
    if (!columns) {
      // Quoted once, not on every compile: knex wraps each qualified name anew each time it builds a SELECT.
      const stored = fields.stored.filter((field) => !field.expression)
      const names = stored.map((field) => storedColumn(this.target, field))
      columns = this.knex.raw(names.map(() => '??').join(', '), names).toSQL().sql
      this.columnLists.set(fields, columns)
    }
    return columns
  }

  /** The record with this id: an integer id bound as the dialect binds integers. */
  whereIdIs(builder: Knex.QueryBuilder, id: Knex.Value) {
    const placeholder = placeholderFor(this.target.dialect, this.target.resource.idField.kind)
    return compare(builder, this.idColumn, '=', id, placeholder)
  }

  /** The number of live records within `visible`, as `total`. */
  count(table: Knex.QueryBuilder, visible: ParsedFilter, bound: readonly unknown[]) {
    return this.whereVisible(table, visible, bound).count({ total: '*' })
  }

  /**
   * One window of records per partition in a single statement: ROW_NUMBER() numbers the rows of each
   * partition in the read's order and the outer query keeps the rows numbered after `bound[windowAt]` up to
   * `bound[windowAt + 1]`. The keyset condition's values are bound after the filter's and the joins'.
   */
  partitioned(db: Knex, table: Knex.QueryBuilder, read: PartitionedRead, bound: readonly unknown[]) {
    const { visible, fields, link, partition, order, condition } = read
    const inner = this.select(table, visible, fields, bound, link)
    const conditionAt = visible.values.length + (read.joinedValues ?? 0)
    condition?.apply(inner, bound, conditionAt)
    if (link) inner.select(this.knex.raw('?? AS ??', [partition, PARTITION]))
    inner.select(
      this.knex.raw(`ROW_NUMBER() OVER (PARTITION BY ?? ORDER BY ${order.sql}) AS ??`, [
        partition,
        ...order.bindings,
        ROW_NUMBER
      ])
    )
    if (read.totals)
      inner.select(this.knex.raw('COUNT(*) OVER (PARTITION BY ??) AS ??', [partition, PARTITION_TOTAL]))
    const windowAt = conditionAt + (condition?.values.length ?? 0)
    return db
      .select('*')
      .from(inner.as('partitioned'))
      .where(ROW_NUMBER, '>', bound[windowAt] as number)
      .andWhere(ROW_NUMBER, '<=', bound[windowAt + 1] as number)
      .orderBy([{ column: read.partitionKey }, { column: ROW_NUMBER }])
  }

  /** The number of live records within `visible` per value of `partitionField`, as PARTITION_TOTAL. */
  partitionTotals(
    table: Knex.QueryBuilder,
    visible: ParsedFilter,
    partitionField: ResolvedField,
    bound: readonly unknown[],
    link?: Link
  ) {
    const partition = storedColumn(link ? link.target : this.target, partitionField)
    return this.whereVisible(link ? this.joinLink(table, link) : table, visible, bound)
      .select(this.knex.raw('?? AS ??', [partition, partitionField.column]))
      .count({ [PARTITION_TOTAL]: '*' })
      .groupBy(partition)
  }
}
