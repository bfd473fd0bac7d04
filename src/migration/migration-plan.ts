import type { ColumnFacts } from '../schema/catalog'
import type { ColumnPlan, IndexPlan, TablePlan } from './table-plan'

/** What a migration changes in a table that exists. */
export interface TableChanges {
  resource: string
  table: string
  /** Columns to add. */
  add: ColumnPlan[]
  /** Indexes of the added columns. */
  indexes: IndexPlan[]
  /** The unique index an `upsert.key` of columns that exist needs, where the table has none. */
  uniqueKey?: IndexPlan
  /** NOT NULL columns whose field may now be null or left out: they accept null. */
  allowNull: ColumnPlan[]
  /** Columns whose type holds less than the field's values: widened to the planned type. */
  widen: Array<{ plan: ColumnPlan; was: ColumnFacts }>
}

/** A migration: the tables it creates and the tables it changes, and what it leaves to the developer. */
export interface MigrationPlan {
  create: TablePlan[]
  alter: TableChanges[]
  /** What the migration refuses to guess, each with what to do by hand; written into the file as comments. */
  notes: string[]
}

/** A migration creating every table. */
export function creationPlan(tables: TablePlan[]): MigrationPlan {
  return { create: tables, alter: [], notes: [] }
}

export function isEmpty(plan: MigrationPlan) {
  const changes = plan.alter.some(
    (table) =>
      table.add.length + table.allowNull.length + table.widen.length + table.indexes.length > 0 ||
      table.uniqueKey !== undefined
  )
  return plan.create.length === 0 && !changes
}
