import type { FieldSchema } from './json-schema'

/**
 * Field annotations live under a symbol so that the schema stays plain JSON schema:
 * Ajv, OpenAPI and TypeBox's own tooling never see them.
 */
export const FIELD_ANNOTATION = Symbol.for('feathers-query/field')

export type FieldRole = 'id' | 'filterable' | 'plain'

export interface FieldAnnotation {
  role: FieldRole
  /** The schema without the `| null` and optional wrapping added for nullable fields. */
  base: FieldSchema
  nullable: boolean
  filterRequired: boolean
  filterOnly: boolean
  /** Kept out of records (REST, CSV, GraphQL objects) although it is stored. */
  hidden: boolean
  /** Usable as an aggregate groupBy key even though it is not filterable. */
  groupBy: boolean
}

export interface FilterableFieldOptions {
  /** The field may be null or absent. */
  nullable?: boolean
  /** Collection requests must filter on this field. */
  filterRequired?: boolean
  /** The field can be filtered on but is left out of every serialized record. */
  filterOnly?: boolean
}

export interface FieldOptions {
  /** The field may be null or absent. */
  nullable?: boolean
  /** Stored but never serialized; combine with `groupBy` for audit columns such as `createdBy`. */
  hidden?: boolean
  /** Offer the field as an aggregate groupBy key although it is not filterable. */
  groupBy?: boolean
}

/**
 * A nullable field's schema: its static type (TypeBox's `Static`, in any version) admits null. Whether the
 * property may be absent is the object's business: wrap the field in your TypeBox's `Type.Optional` for a
 * `?` in the static type; the plugin lets clients leave nullable fields out either way.
 */
export type Nullable<T extends FieldSchema> = { [K in keyof T]: K extends 'static' ? T[K] | null : T[K] }

/** TypeBox's kind marker, the same registered symbol in every TypeBox version. */
const TYPEBOX_KIND = Symbol.for('TypeBox.Kind')

function annotate(schema: FieldSchema, annotation: Omit<FieldAnnotation, 'base'>): FieldSchema {
  const typed: FieldSchema = annotation.nullable ? nullable(schema) : schema
  // A copy, so that one TypeBox schema can be annotated differently in two resources.
  return Object.assign({}, typed, { [FIELD_ANNOTATION]: { ...annotation, base: schema } })
}

function nullable(schema: FieldSchema): FieldSchema {
  // `anyOf` with `null` written out as JSON Schema (and marked a union, as TypeBox would), rather than with
  // the plugin's own TypeBox, so that the field's schema is the same whichever TypeBox built `schema`.
  return { [TYPEBOX_KIND]: 'Union', anyOf: [schema, { type: 'null' }] } as FieldSchema
}

/** Marks the record identifier. In REST the type of `{id}` comes from this property. */
export function IDField<T extends FieldSchema>(schema: T): T {
  return annotate(schema, {
    role: 'id',
    nullable: false,
    filterRequired: false,
    filterOnly: false,
    hidden: false,
    groupBy: true
  }) as T
}

/** A field that can be filtered, sorted on and aggregated. */
export function FilterableField<T extends FieldSchema>(
  schema: T,
  options: FilterableFieldOptions & { nullable: true }
): Nullable<T>
export function FilterableField<T extends FieldSchema>(schema: T, options?: FilterableFieldOptions): T
export function FilterableField<T extends FieldSchema>(
  schema: T,
  options: FilterableFieldOptions = {}
): FieldSchema {
  return annotate(schema, {
    role: 'filterable',
    nullable: options.nullable === true,
    filterRequired: options.filterRequired === true,
    filterOnly: options.filterOnly === true,
    hidden: false,
    groupBy: true
  })
}

/** A field that is returned but neither filterable nor aggregatable. */
export function Field<T extends FieldSchema>(
  schema: T,
  options: FieldOptions & { nullable: true }
): Nullable<T>
export function Field<T extends FieldSchema>(schema: T, options?: FieldOptions): T
export function Field<T extends FieldSchema>(schema: T, options: FieldOptions = {}): FieldSchema {
  return annotate(schema, {
    role: 'plain',
    nullable: options.nullable === true,
    filterRequired: false,
    filterOnly: false,
    hidden: options.hidden === true,
    groupBy: options.groupBy === true
  })
}

export function readAnnotation(schema: FieldSchema): FieldAnnotation | undefined {
  return (schema as unknown as Record<symbol, FieldAnnotation | undefined>)[FIELD_ANNOTATION]
}
