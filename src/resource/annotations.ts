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

/**
 * JSON Schema keywords given to the annotation rather than to TypeBox's `Type.X(...)`, which writes them into
 * the schema just the same but does not type them: given here, TypeScript sees them too (create data leaves
 * out a read-only field and makes a defaulted one optional). Written the TypeBox way they still work at run
 * time, typed as a writable, required field.
 */
export interface WriteOptions {
  /** Clients never write the field (an id the database generates, a timestamp the server sets). */
  readOnly?: boolean
  /** What a create that leaves the field out stores (`default` in the schema). */
  default?: unknown
}

export interface IDFieldOptions {
  /** Clients never write the id (the database generates it): `readOnly: true` in the schema. */
  readOnly?: boolean
}

export interface FilterableFieldOptions extends WriteOptions {
  /** The field may be null or absent. */
  nullable?: boolean
  /** Collection requests must filter on this field. */
  filterRequired?: boolean
  /** The field can be filtered on but is left out of every serialized record. */
  filterOnly?: boolean
}

export interface FieldOptions extends WriteOptions {
  /** The field may be null or absent. */
  nullable?: boolean
  /** Stored but never serialized; combine with `groupBy` for audit columns such as `createdBy`. */
  hidden?: boolean
  /** Offer the field as an aggregate groupBy key although it is not filterable. */
  groupBy?: boolean
}

type AnyFieldOptions = IDFieldOptions & FilterableFieldOptions & FieldOptions

/**
 * A nullable field's schema: its static type (TypeBox's `Static`, in any version) admits null. Whether the
 * property may be absent is the object's business: wrap the field in your TypeBox's `Type.Optional` for a
 * `?` in the static type; the plugin lets clients leave nullable fields out either way.
 */
export type Nullable<T extends FieldSchema> = { [K in keyof T]: K extends 'static' ? T[K] | null : T[K] }

/** What an annotation says of its field, as TypeScript sees it: records, data and queries are typed by it. */
export interface FieldFacts {
  role: FieldRole
  hidden: boolean
  filterOnly: boolean
  nullable: boolean
  readOnly: boolean
  /** Has a default, so create data may leave it out. */
  defaulted: boolean
  groupBy: boolean
}

/**
 * A key of the schema's type only, never set on the schema (a run-time key would reach Ajv and OpenAPI).
 * A string, not a symbol of the plugin's, so that an application's declaration files can always name it.
 */
type FieldFactsKey = '~fieldFacts'

/**
 * A field schema as an annotation returns it: the schema's own type (so that every TypeBox version's `Static`
 * reads it as before), branded with its facts. `readOnly` and `default` count only when given to the
 * annotation (`WriteOptions`).
 */
export type Annotated<T, F extends FieldFacts> = T & { readonly [K in FieldFactsKey]?: F }

/** The facts of an annotated field schema. */
export type FactsOf<T> = T extends { readonly [K in FieldFactsKey]?: infer F } ? NonNullable<F> : never

type Flag<O, K extends Exclude<keyof AnyFieldOptions, 'default'>> = O extends { [P in K]: true }
  ? true
  : false

/** The facts of an annotation's options, literal as written (`{ hidden: true }`); unknown flags are false. */
type FactsFrom<R extends FieldRole, O> = {
  role: R
  hidden: Flag<O, 'hidden'>
  filterOnly: Flag<O, 'filterOnly'>
  nullable: Flag<O, 'nullable'>
  readOnly: Flag<O, 'readOnly'>
  defaulted: O extends { default: infer V } ? (undefined extends V ? false : true) : false
  groupBy: R extends 'plain' ? Flag<O, 'groupBy'> : true
}

type AnnotatedWith<T extends FieldSchema, R extends FieldRole, O> = Annotated<
  O extends { nullable: true } ? Nullable<T> : T,
  FactsFrom<R, O>
>

/** No options: every flag false. */
type NoOptions = Record<never, never>

/** The options as written, a misspelled option (which inference alone would accept) typed `never`. */
type Checked<O, Options> = O & { [K in Exclude<keyof O, keyof Options>]: never }

/** TypeBox's kind marker, the same registered symbol in every TypeBox version. */
const TYPEBOX_KIND = Symbol.for('TypeBox.Kind')

function annotate(
  schema: FieldSchema,
  options: WriteOptions,
  annotation: Omit<FieldAnnotation, 'base'>
): FieldSchema {
  // The options write the keywords `Type.Integer({ readOnly: true, default: 0 })` would, where the plugin
  // reads them.
  const keywords: FieldSchema = {}
  if (options.readOnly === true) keywords.readOnly = true
  if (options.default !== undefined) keywords.default = options.default
  const base = Object.keys(keywords).length > 0 ? Object.assign({}, schema, keywords) : schema
  const typed: FieldSchema = annotation.nullable ? nullable(base) : base
  // A copy, so that one TypeBox schema can be annotated differently in two resources.
  return Object.assign({}, typed, { [FIELD_ANNOTATION]: { ...annotation, base } })
}

function nullable(schema: FieldSchema): FieldSchema {
  // `anyOf` with `null` written out as JSON Schema (and marked a union, as TypeBox would), rather than with
  // the plugin's own TypeBox, so that the field's schema is the same whichever TypeBox built `schema`.
  return { [TYPEBOX_KIND]: 'Union', anyOf: [schema, { type: 'null' }] } as FieldSchema
}

// Each annotation is generic over its options so that their flags stay literal (`{ hidden: true }` types
// `true`), which the facts are worked out from; options of a wider type (a variable of `FieldOptions`) take
// the second overload, whose facts are false, as they are when not given.

/** Marks the record identifier. In REST the type of `{id}` comes from this property. */
export function IDField<T extends FieldSchema, O extends IDFieldOptions = NoOptions>(
  schema: T,
  options?: Checked<O, IDFieldOptions>
): AnnotatedWith<T, 'id', O>
export function IDField<T extends FieldSchema>(
  schema: T,
  options?: IDFieldOptions
): AnnotatedWith<T, 'id', IDFieldOptions>
export function IDField(schema: FieldSchema, options: IDFieldOptions = {}): FieldSchema {
  return annotate(schema, options, {
    role: 'id',
    nullable: false,
    filterRequired: false,
    filterOnly: false,
    hidden: false,
    groupBy: true
  })
}

/** A field that can be filtered, sorted on and aggregated. */
export function FilterableField<T extends FieldSchema, O extends FilterableFieldOptions = NoOptions>(
  schema: T,
  options?: Checked<O, FilterableFieldOptions>
): AnnotatedWith<T, 'filterable', O>
export function FilterableField<T extends FieldSchema>(
  schema: T,
  options?: FilterableFieldOptions
): AnnotatedWith<T, 'filterable', FilterableFieldOptions>
export function FilterableField(schema: FieldSchema, options: FilterableFieldOptions = {}): FieldSchema {
  return annotate(schema, options, {
    role: 'filterable',
    nullable: options.nullable === true,
    filterRequired: options.filterRequired === true,
    filterOnly: options.filterOnly === true,
    hidden: false,
    groupBy: true
  })
}

/** A field that is returned but neither filterable nor aggregatable. */
export function Field<T extends FieldSchema, O extends FieldOptions = NoOptions>(
  schema: T,
  options?: Checked<O, FieldOptions>
): AnnotatedWith<T, 'plain', O>
export function Field<T extends FieldSchema>(
  schema: T,
  options?: FieldOptions
): AnnotatedWith<T, 'plain', FieldOptions>
export function Field(schema: FieldSchema, options: FieldOptions = {}): FieldSchema {
  return annotate(schema, options, {
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
