import type { ResolvedResource } from '../resource/resolved'
import type { Catalog, ColumnFacts } from '../schema/catalog'
import { describeType } from '../schema/column-types'
import { schemaMismatches } from '../schema/compare'
import type { ColumnType } from './column-type'
import type { MigrationPlan, TableChanges } from './migration-plan'
import type { ColumnPlan, TablePlan } from './table-plan'

const INTEGER_TYPES = ['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint']

/**
 * A reference to a table that exists takes its key's type from the database: MySQL refuses a foreign key
 * whose type or sign differs from its key's, whatever the schema says the key is.
 */
function referencingExisting(column: ColumnPlan, catalog: Catalog): ColumnPlan {
  const key = column.references && catalog.column(column.references.table, column.references.column)
  if (!key || !INTEGER_TYPES.includes(key.type)) return column
  const type: ColumnType = { name: key.type === 'bigint' ? 'bigInteger' : 'integer' }
  return { ...column, type, unsigned: key.unsigned }
}

/** A widening that loses nothing: a longer text, or fractions in a column of integers. */
function safeWidening(plan: ColumnPlan, actual: ColumnFacts): boolean {
  const textual = ['string', 'text'].includes(plan.type.name)
  if (textual) return actual.maxLength !== undefined && /char|text/.test(actual.type)
  return plan.type.name === 'double' && INTEGER_TYPES.includes(actual.type)
}

function changesOf(
  plan: TablePlan,
  resource: ResolvedResource,
  catalog: Catalog,
  notes: string[],
  keyIndexMissing: boolean
): TableChanges {
  const changes: TableChanges = {
    resource: plan.resource,
    table: plan.table,
    add: [],
    indexes: [],
    allowNull: [],
    widen: []
  }
  const byColumn = new Map(plan.columns.map((column) => [column.column, column]))
  for (const mismatch of schemaMismatches(catalog, [resource])) {
    const column = byColumn.get(mismatch.column ?? '')
    if (!column) continue
    const where = `${plan.table}.${column.column} (${plan.resource}.${column.field})`
    if (mismatch.kind === 'missing') {
      const added = referencingExisting(column, catalog)
      if (!added.nullable && added.default === undefined) {
        // Rows that exist have no value for it: NOT NULL without a default would fail on them.
        notes.push(
          `${where} is required, but the rows the table holds have no value for it: it is added nullable. ` +
            `Fill it, then make it NOT NULL with a migration of your own (table.dropNullable('${column.column}')).`
        )
        changes.add.push({ ...added, nullable: true })
      } else changes.add.push(added)
    } else if (mismatch.kind === 'nullability' && !mismatch.expected?.generatedId) {
      // A widened column is rewritten whole, nullability included.
      if (!changes.widen.some((widened) => widened.plan.column === column.column))
        changes.allowNull.push(column)
    } else if (mismatch.kind === 'type' && mismatch.actual && safeWidening(column, mismatch.actual)) {
      changes.widen.push({
        plan: { ...column, nullable: column.nullable || mismatch.actual.nullable },
        was: mismatch.actual
      })
    } else {
      const was = mismatch.actual ? `${describeType(mismatch.actual)}: ` : ''
      notes.push(`${where} ${mismatch.detail} (${was}converting its values is left to you).`)
    }
  }
  const added = new Set(changes.add.map((column) => column.column))
  changes.indexes = plan.indexes.filter((index) => index.columns.every((column) => added.has(column)))
  const key = resource.upsertKey?.map((field) => field.column)
  const keyIndex = key && plan.indexes.find((index) => index.unique && index.columns.join() === key.join())
  if (keyIndexMissing && keyIndex && !changes.indexes.includes(keyIndex)) {
    changes.uniqueKey = keyIndex
    notes.push(
      `${plan.table} gets a unique index on (${key.join(', ')}) for ${plan.resource}.upsert.key: ` +
        'it fails while two rows hold the same key; merge them first.'
    )
  }
  for (const actual of catalog.columnsOf(plan.table)) {
    if (plan.columns.some((column) => catalog.column(plan.table, column.column) === actual)) continue
    notes.push(
      `${plan.table}.${actual.name} is no field of ${plan.resource}: it is kept. If a field was renamed from it, ` +
        `rename the column (table.renameColumn('${actual.name}', ...)) rather than adding the new one.`
    )
  }
  return changes
}

/**
 * The migration that brings the database's tables in line with the resources' schemas: missing tables
 * created, missing columns added, NOT NULL relaxed where a field may be null, text lengthened and integers
 * made doubles where a field needs it, an `upsert.key`'s unique index added (`missingKeyIndexes`: the resources
 * whose table lacks it). It never drops, renames or converts: those are noted for the
 * developer, since a schema cannot tell a rename from a removal and an addition.
 */
export function diffPlan(
  tables: TablePlan[],
  resources: ResolvedResource[],
  catalog: Catalog,
  missingKeyIndexes: ReadonlySet<string> = new Set()
): MigrationPlan {
  const notes: string[] = []
  const create: TablePlan[] = []
  const alter: TableChanges[] = []
  for (const plan of tables) {
    const resource = resources.find((candidate) => candidate.name === plan.resource)!
    if (!catalog.hasTable(plan.table)) {
      create.push({ ...plan, columns: plan.columns.map((column) => referencingExisting(column, catalog)) })
    } else {
      alter.push(changesOf(plan, resource, catalog, notes, missingKeyIndexes.has(resource.name)))
    }
  }
  return { create, alter, notes }
}
