import type { ResolvedResource } from '../resource/resolved'
import type { Catalog, ColumnFacts } from './catalog'
import { describeType, holdsKind } from './column-types'
import { storedColumns, type StoredColumn } from './stored-columns'

export type MismatchKind = 'missing table' | 'missing' | 'type' | 'nullability' | 'missing unique index'

/** One way a resource's table differs from what its schema needs. */
export interface SchemaMismatch {
  resource: string
  /** The field (or option) whose column differs; none for a missing table. */
  field?: string
  table: string
  column?: string
  kind: MismatchKind
  /** What differs, in words. */
  detail: string
  expected?: StoredColumn
  actual?: ColumnFacts
}

function typeProblem(catalog: Catalog, expected: StoredColumn, actual: ColumnFacts): string | undefined {
  const type = describeType(actual)
  const holds =
    holdsKind(catalog.database, actual, expected.kind) ||
    (expected.digits && holdsKind(catalog.database, actual, 'integer'))
  if (!holds) {
    return `is ${type}, which does not hold ${expected.kind} values`
  }
  const { maxLength } = expected
  if (expected.kind === 'string' && maxLength !== undefined && actual.maxLength !== undefined) {
    if (actual.maxLength < maxLength) {
      return `is ${type}, shorter than the field's maxLength ${maxLength}`
    }
  }
  return undefined
}

function nullabilityProblem(expected: StoredColumn, actual: ColumnFacts): string | undefined {
  if (expected.nullable && !actual.nullable) return 'is NOT NULL, but the field may be null'
  if (actual.nullable || actual.hasDefault) return undefined
  if (expected.mayBeLeftOut) return 'is NOT NULL without a default, but a create may leave the field out'
  if (expected.generatedId)
    return 'has no default nor auto-increment, but the id is readOnly: the database must make it'
  return undefined
}

/**
 * How each resource's table differs from its schema: missing tables and columns, columns whose type does
 * not hold the field's values, and columns that refuse a null or a missing value the plugin may write. A
 * nullable column behind a required field is accepted: the plugin never writes null there.
 */
export function schemaMismatches(catalog: Catalog, resources: ResolvedResource[]): SchemaMismatch[] {
  const mismatches: SchemaMismatch[] = []
  for (const resource of resources) {
    const { table } = resource
    if (!catalog.hasTable(table)) {
      mismatches.push({ resource: resource.name, table, kind: 'missing table', detail: 'is missing' })
      continue
    }
    for (const expected of storedColumns(resource)) {
      const where = {
        resource: resource.name,
        field: expected.field,
        table,
        column: expected.column,
        expected
      }
      const actual = catalog.column(table, expected.column)
      if (!actual) {
        mismatches.push({ ...where, kind: 'missing', detail: 'is missing' })
        continue
      }
      const type = typeProblem(catalog, expected, actual)
      if (type) mismatches.push({ ...where, actual, kind: 'type', detail: type })
      const nullability = nullabilityProblem(expected, actual)
      if (nullability) mismatches.push({ ...where, actual, kind: 'nullability', detail: nullability })
    }
  }
  return mismatches
}

/** One line of a message naming the resource, field, table and column, and what differs. */
export function describeMismatch(mismatch: SchemaMismatch) {
  if (!mismatch.column) return `${mismatch.resource}: table ${mismatch.table} ${mismatch.detail}`
  const subject = mismatch.field?.includes('.')
    ? `${mismatch.resource} (${mismatch.field})`
    : `${mismatch.resource}.${mismatch.field}`
  return `${subject}: column ${mismatch.table}.${mismatch.column} ${mismatch.detail} (${mismatch.kind})`
}
