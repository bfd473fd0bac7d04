import type { ResolvedResource } from '../resource/resolved'
import { storedColumns, type StoredColumn } from '../schema/stored-columns'
import {
  columnTypeOf,
  INDEXABLE_LENGTH,
  referencingType,
  type ColumnType,
  type TypedSchema
} from './column-type'

export interface ForeignKeyPlan {
  table: string
  column: string
  /** Link tables' keys go with either end; other references keep the database's refusal. */
  onDelete?: 'CASCADE'
}

export interface ColumnPlan {
  column: string
  /** The resource's field (or option) the column stores. */
  field: string
  type: ColumnType
  /** MySQL's increments are unsigned, and so must the columns referencing them be. */
  unsigned: boolean
  nullable: boolean
  default?: string | number | boolean
  primary: boolean
  references?: ForeignKeyPlan
}

export interface IndexPlan {
  columns: string[]
  unique: boolean
}

/** A resource's table as the migration creates it. */
export interface TablePlan {
  resource: string
  table: string
  columns: ColumnPlan[]
  indexes: IndexPlan[]
}

/** The key column a reference points at: the related resource's id, and how it is stored. */
export interface KeyColumn {
  table: string
  column: string
  type: ColumnType
  unsigned: boolean
}

export function keyColumnOf(resource: ResolvedResource): KeyColumn {
  const id = storedColumns(resource).find((column) => column.field === resource.idField.name)!
  const type = columnTypeOf(id.kind, resource.idField.schema as TypedSchema, id.generatedId)
  return { table: resource.table, column: id.column, type, unsigned: type.name.endsWith('ncrements') }
}

interface Reference {
  target: ResolvedResource
  onDelete?: 'CASCADE'
}

/**
 * The columns of a resource that reference another's id: its one-relations' foreign keys, the foreign keys
 * other resources' one-to-many relations keep in it, and, for a join resource, both keys of each link.
 */
export function referencesOf(resource: ResolvedResource, all: ResolvedResource[]): Map<string, Reference> {
  const references = new Map<string, Reference>()
  for (const relation of resource.one) references.set(relation.foreignKey.column, { target: relation.target })
  for (const other of all) {
    for (const relation of other.many) {
      if (relation.through?.resource === resource) {
        references.set(relation.through.foreignKey.column, { target: other, onDelete: 'CASCADE' })
        references.set(relation.through.otherKey.column, { target: relation.target, onDelete: 'CASCADE' })
      } else if (
        relation.foreignKey &&
        relation.target === resource &&
        !references.has(relation.foreignKey.column)
      ) {
        references.set(relation.foreignKey.column, { target: other })
      }
    }
  }
  return references
}

function defaultOf(resource: ResolvedResource, stored: StoredColumn): ColumnPlan['default'] {
  const value = resource.fieldMap.get(stored.field)?.schema.default as unknown
  if (stored.kind === 'date') return undefined
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? value
    : undefined
}

/** How a column is planned: a reference takes its key's type, every other column its field's. */
export function columnPlan(
  resource: ResolvedResource,
  stored: StoredColumn,
  reference: { key: KeyColumn; onDelete?: 'CASCADE' } | undefined
): ColumnPlan {
  const field = resource.fieldMap.get(stored.field)
  const primary = field?.role === 'id'
  const type = reference
    ? referencingType(reference.key.type)
    : columnTypeOf(stored.kind, (field?.schema ?? {}) as TypedSchema, stored.generatedId)
  return {
    column: stored.column,
    field: stored.field,
    type,
    unsigned: reference?.key.unsigned ?? false,
    // A required field is NOT NULL; the id always.
    nullable: !primary && (field ? field.nullable : stored.nullable),
    default: defaultOf(resource, stored),
    primary,
    references: reference && {
      table: reference.key.table,
      column: reference.key.column,
      onDelete: reference.onDelete
    }
  }
}

const indexable = (column: ColumnPlan) =>
  column.type.name !== 'text' && !(column.type.name === 'string' && column.type.length > INDEXABLE_LENGTH)

/**
 * The indexes that pay whatever the data: each reference (joins, relation filters and the loading of a
 * parent's related records look them up), the filterRequired fields (every list filters on them) and the
 * first field of `defaultSort` (every list orders by it). A link table's pair is unique, and so is the
 * `upsert.key` (an upsert finds the record holding it through that index). Other filterable
 * fields get none: an index costs every write, and only the application's queries tell which pay.
 */
export function indexesOf(resource: ResolvedResource, columns: ColumnPlan[]): IndexPlan[] {
  const byColumn = new Map(columns.map((column) => [column.column, column]))
  const indexes: IndexPlan[] = []
  const covered = new Set<string>(columns.filter((column) => column.primary).map((column) => column.column))
  const add = (names: string[], unique = false) => {
    if (covered.has(names[0]) || !names.every((name) => byColumn.has(name) && indexable(byColumn.get(name)!)))
      return
    indexes.push({ columns: names, unique })
    covered.add(names[0])
  }
  const key = resource.upsertKey?.map((field) => field.column)
  if (key) add(key, true)
  const links = columns.filter((column) => column.references?.onDelete === 'CASCADE')
  if (links.length === 2)
    add(
      links.map((link) => link.column),
      true
    )
  for (const column of columns) if (column.references) add([column.column])
  for (const field of resource.fields) if (field.filterRequired) add([field.column])
  const firstSort = resource.query.defaultSort[0]
  if (firstSort) add([resource.fieldMap.get(firstSort.field)?.column ?? firstSort.field])
  return indexes
}

/** The tables of `resources` as a migration creates them, each referenced table before those referencing it. */
export function tablePlans(resources: ResolvedResource[]): TablePlan[] {
  const plans = resources.map((resource): TablePlan => {
    const references = referencesOf(resource, resources)
    const columns = storedColumns(resource).map((stored) => {
      const reference = references.get(stored.column)
      return columnPlan(
        resource,
        stored,
        reference && { key: keyColumnOf(reference.target), onDelete: reference.onDelete }
      )
    })
    return { resource: resource.name, table: resource.table, columns, indexes: indexesOf(resource, columns) }
  })
  return referencedFirst(plans)
}

/** Orders tables so that each one's references are created before it; a cycle keeps the given order. */
export function referencedFirst(plans: TablePlan[]): TablePlan[] {
  const byTable = new Map(plans.map((plan) => [plan.table, plan]))
  const ordered: TablePlan[] = []
  const visiting = new Set<string>()
  const visit = (plan: TablePlan) => {
    if (ordered.includes(plan) || visiting.has(plan.table)) return
    visiting.add(plan.table)
    for (const column of plan.columns) {
      const target = column.references && byTable.get(column.references.table)
      if (target && target !== plan) visit(target)
    }
    ordered.push(plan)
  }
  plans.forEach(visit)
  return ordered
}
