import { readAnnotation } from '../resource/annotations'
import type { FieldKind } from '../resource/field-kind'
import type { ResolvedField, ResolvedResource } from '../resource/resolved'

/** A column a resource reads and writes, and what the field it stores says of its values. */
export interface StoredColumn {
  /** The field, or the option that names the column (`delete.softDeleteColumn`). */
  field: string
  column: string
  kind: FieldKind
  /** Writes may store null in it: the field is nullable, or it is the soft delete mark. */
  nullable: boolean
  /** A create may leave the field out without a default of the schema's: the database must fill it. */
  mayBeLeftOut: boolean
  /** The most characters the schema lets a value have. */
  maxLength?: number
  /** The id, made by the database (`readOnly`). */
  generatedId: boolean
  /** A string of decimal digits only (`pattern: '^[0-9]+$'`), which an integer column holds as well. */
  digits: boolean
}

/** Patterns admitting decimal digits only: ids kept as strings in the API and as integers in the table. */
const DIGITS_ONLY = new Set(['^[0-9]+$', '^\\d+$', '^[1-9][0-9]*$', '^-?[0-9]+$', '^-?\\d+$'])

/** The field's own nullability, as its annotation says (optional alone is not null). */
function acceptsNull(resource: ResolvedResource, field: ResolvedField) {
  const annotation = readAnnotation(resource.definition.schema.properties[field.name])
  return annotation?.nullable === true
}

function storedColumn(resource: ResolvedResource, field: ResolvedField): StoredColumn {
  const schema = field.schema as {
    maxLength?: unknown
    default?: unknown
    readOnly?: unknown
    pattern?: unknown
  }
  const nullable = acceptsNull(resource, field)
  return {
    field: field.name,
    column: field.column,
    kind: field.kind,
    nullable,
    mayBeLeftOut: field.role !== 'id' && !nullable && field.nullable && schema.default === undefined,
    maxLength: typeof schema.maxLength === 'number' ? schema.maxLength : undefined,
    generatedId: field.role === 'id' && schema.readOnly === true,
    digits: field.kind === 'string' && typeof schema.pattern === 'string' && DIGITS_ONLY.has(schema.pattern)
  }
}

/**
 * The columns a resource's statements name: every field but those computed (in JavaScript or SQL: they have
 * no column), hidden fields included, and the soft delete mark, a nullable date. Link tables are the join
 * resources' own tables, whose fields hold both keys.
 */
export function storedColumns(resource: ResolvedResource): StoredColumn[] {
  const columns = resource.fields
    .filter((field) => !field.computed && !field.expression)
    .map((field) => storedColumn(resource, field))
  const softDelete = resource.softDeleteColumn
  if (softDelete && !columns.some((column) => column.column === softDelete)) {
    columns.push({
      field: 'delete.softDeleteColumn',
      column: softDelete,
      kind: 'date',
      nullable: true,
      mayBeLeftOut: true,
      generatedId: false,
      digits: false
    })
  }
  return columns
}
