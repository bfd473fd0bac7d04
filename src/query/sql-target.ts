import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import type { Dialect, SqlColumn } from '../dialect/dialect'
import { fieldExpression } from './sql-fields'

/** A resource's table in a statement, under its name or an alias, on one database. */
export interface SqlTarget {
  resource: ResolvedResource
  dialect: Dialect
  /** Table name or alias columns are qualified with. */
  table: string
}

/** The field's column qualified with the target's table, or the expression of a SQL-computed field. */
export function qualified(target: SqlTarget, field: ResolvedField): SqlColumn {
  if (field.expression) return fieldExpression(target.dialect, target.table, field)
  return `${target.table}.${field.column}`
}

/** The qualified column of a stored field (an id, a foreign key), never an expression. */
export function storedColumn(target: SqlTarget, field: ResolvedField): string {
  return `${target.table}.${field.column}`
}
