import type { ResolvedField, ResolvedOneRelation } from '../resource/resolved'
import type { SqlColumn } from '../dialect/dialect'
import type { ColumnFunction, DateBucket, GroupFill } from '../model/aggregate'

/**
 * The columns of a validated aggregate request: every name resolved to a field of the resource, every column
 * given an alias made by the plugin. Client strings never reach the SQL; only fields and aliases do.
 */
export interface GroupColumn {
  /** What the request named it: the field's name, or a dotted path through to-one relations. */
  name: string
  field: ResolvedField
  /** The to-one relations the field is reached through (joined to the statement); none for an own field. */
  relations?: ResolvedOneRelation[]
  /** The qualified column, when not the field's own column of the aggregated table. */
  column?: SqlColumn
  /** Date fields only: the bucket their values are truncated to, in `zone`'s calendar. */
  bucket?: DateBucket
  zone?: string
  fill?: GroupFill
  alias: string
}

export interface AggregateColumn {
  fn: ColumnFunction
  /** Percentiles only: which one, 0 to 1. */
  p?: number
  field: ResolvedField
  alias: string
  /** Computed for `having` or `sorting` only, not answered. */
  hidden?: boolean
}
