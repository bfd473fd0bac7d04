import type { DbValue } from '../resource/codec'
import type { SqlColumn } from '../dialect/dialect'
import type { ComparisonOperator } from '../model/query'
import type { RelationQuantifier } from '../resource/relation-quantifiers'
import type { SqlTarget } from './sql-target'

/** One operator on one column; its values are `bound[first]` to `bound[first + count - 1]`. */
export interface Comparison {
  column: SqlColumn
  operator: ComparisonOperator
  first: number
  count: number
  /** The operand of `is` / `isNot`, which is part of the SQL text rather than bound. */
  truth?: boolean | null
  /** Where each value is bound: `?`, or typed as the dialect binds integers (`placeholderFor`). */
  parameter: string
}

/** `and` / `or` over sub-filters, each a conjunction of its own conditions. */
export interface Group {
  operator: 'and' | 'or'
  members: Condition[][]
}

/**
 * A relation filter as SQL: EXISTS a related row (`some`), NOT EXISTS one (`none`), or NOT EXISTS one for which
 * the conditions are not TRUE (`every`), correlated with the row of the statement around it. Only rows within
 * `scope` and alive count, whatever the quantifier.
 */
export interface Exists {
  exists: true
  quantifier: RelationQuantifier
  /** The related table under its alias. */
  target: SqlTarget
  /** Many-to-many: the join resource's table under its alias, joined `on` the related id. */
  link?: { target: SqlTarget; on: [string, string]; conditions: Condition[] }
  /** Inner column = outer column. */
  correlation: [string, string]
  /** Soft-delete columns of the related (and join) rows, which must be NULL. */
  liveColumns: string[]
  /** The filter's conditions on a related row. */
  conditions: Condition[]
  /** What the caller may read of the related resource (its authorize and defaultFilter). */
  scope: Condition[]
}

export type Condition = Comparison | Group | Exists

/**
 * A filter checked and encoded, apart from the knex calls that add it to a statement. Two filters with the
 * same `key` compile to the same SQL text whatever their values, which is what lets a statement be compiled
 * once per shape and run with each call's values.
 */
export interface ParsedFilter {
  /** The SQL shape: fields, operators, grouping, list lengths and `is` operands, never a bound value. */
  key: string
  /** Encoded values, in the order the conditions bind them. */
  values: readonly DbValue[]
  conditions: readonly Condition[]
}
