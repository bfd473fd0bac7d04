import type { Paginated, Query } from '@feathersjs/feathers'
import type { FieldComparison } from '../model/query'
import type {
  AggregateRequest,
  AggregateSortField,
  DateBucket,
  GroupByField,
  StatisticalFunction
} from '../model/aggregate'
import type { Page, PartitionedPages } from '../model/page'
import type { ResourceParams, ResourceRecord } from '../model/records'
import type { FactsOf } from './annotations'
import type { ResourceDefinition } from './definition'

/**
 * The TypeScript types of a resource's records, data and queries, worked out from its definition
 * (`typeof resource`, as `defineResource` returns it): the schema's static type and each annotation's facts.
 * A definition whose fields TypeScript does not know one by one (`ResourceDefinition`, `any`) types records
 * as `ResourceRecord` and queries as Feathers' `Query`, as before.
 */

type Properties<D extends ResourceDefinition> = D['schema']['properties']

/** The schema's static type, by each TypeBox version's own `static` (both have it; their `Static`s differ). */
type StaticOf<D extends ResourceDefinition> = D['schema'] extends { static: infer T } ? T : ResourceRecord

type Untyped<D extends ResourceDefinition> = string extends keyof Properties<D> ? true : false

/** The fields whose facts match `F`. */
type FieldsWhere<D extends ResourceDefinition, F> = {
  [K in keyof Properties<D>]-?: FactsOf<Properties<D>[K]> extends F ? K : never
}[keyof Properties<D>] &
  string

type FieldName<D extends ResourceDefinition> = keyof Properties<D> & string
type ComputedName<D extends ResourceDefinition> = keyof NonNullable<D['computed']> & string
type SqlComputedName<D extends ResourceDefinition> = keyof NonNullable<D['sqlComputed']> & string
type ManyRelationName<D extends ResourceDefinition> = keyof NonNullable<D['many']> & string
type RelationName<D extends ResourceDefinition> = ManyRelationName<D> | (keyof NonNullable<D['one']> & string)

/** What clients read: neither hidden nor filterOnly. */
export type ReadableFieldOf<D extends ResourceDefinition> = Exclude<
  FieldName<D>,
  FieldsWhere<D, { hidden: true }> | FieldsWhere<D, { filterOnly: true }>
>

/** What clients write: stored, neither hidden nor read-only. */
export type WritableFieldOf<D extends ResourceDefinition> = Exclude<
  FieldName<D>,
  FieldsWhere<D, { hidden: true }> | FieldsWhere<D, { readOnly: true }> | ComputedName<D> | SqlComputedName<D>
>

/** The id and the `FilterableField`s (filterOnly ones too): what queries filter and sort by. */
export type FilterableFieldOf<D extends ResourceDefinition> = Exclude<
  FieldsWhere<D, { role: 'id' | 'filterable' }>,
  ComputedName<D>
>

type OptionalKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? K : never }[keyof T]

/** A property's value; one the schema may leave absent is null in the database, and so in records. */
type Value<T, K extends keyof T> = undefined extends T[K] ? Exclude<T[K], undefined> | null : T[K]

/** One object type where an intersection was, for readable hovers and messages. */
type Flatten<T> = { [K in keyof T]: T[K] } & NonNullable<unknown>

/** A record as clients read it: the schema's static type without hidden and filterOnly fields. */
export type RecordOf<D extends ResourceDefinition> =
  Untyped<D> extends true
    ? ResourceRecord
    : Flatten<{ [K in keyof StaticOf<D> as K extends ReadableFieldOf<D> ? K : never]: Value<StaticOf<D>, K> }>

/** What a create may leave out: fields that may be null or absent, and those with a default. */
type Omissible<D extends ResourceDefinition> =
  FieldsWhere<D, { nullable: true }> | FieldsWhere<D, { defaulted: true }> | OptionalKeys<StaticOf<D>>

/** What `create` takes: the writable fields, optional where a create may leave them out. */
export type DataOf<D extends ResourceDefinition> =
  Untyped<D> extends true
    ? ResourceRecord
    : Flatten<
        {
          [
            K in keyof StaticOf<D> as K extends Exclude<WritableFieldOf<D>, Omissible<D>> ? K : never
          ]: StaticOf<D>[K]
        } & {
          [K in keyof StaticOf<D> as K extends WritableFieldOf<D> & Omissible<D> ? K : never]?: Value<
            StaticOf<D>,
            K
          >
        }
      >

/** What `patch` (and `update`, a partial update unless `update.replace`) takes. */
export type PatchOf<D extends ResourceDefinition> =
  Untyped<D> extends true ? ResourceRecord : Partial<DataOf<D>>

/** Feathers' operators on one field, as the server takes them (src/query/feathers-syntax.ts). */
export interface FieldOperators<V> {
  $in?: V[]
  $nin?: V[]
  $lt?: V
  $lte?: V
  $gt?: V
  $gte?: V
  $ne?: V | null
}

/** LIKE patterns, of text fields (and the id) only. */
export interface PatternOperators {
  $like?: string
  $notlike?: string
  $ilike?: string
}

/** Fields LIKE applies to: text, and the id whatever its type (as the server's filter parser). */
type PatternField<D extends ResourceDefinition> = StaticField<D, string> | FieldsWhere<D, { role: 'id' }>

/** The conditions of a Feathers query: filterable fields, relation filters, `$or` and `$and`. */
export type FilterQueryOf<D extends ResourceDefinition> =
  Untyped<D> extends true
    ? Query
    : Flatten<
        {
          // A value (null too where the field may be null: `IS NULL`), or operators.
          [K in keyof StaticOf<D> as K extends FilterableFieldOf<D> ? K : never]?:
            | Value<StaticOf<D>, K>
            | (FieldOperators<Exclude<StaticOf<D>[K], null | undefined>> &
                (K extends PatternField<D> ? PatternOperators : unknown))
        } & {
          // The related resource's own query, which TypeScript cannot look up by its name.
          [R in RelationName<D>]?: Query
        } & {
          // No related record matches it, every one does.
          [R in ManyRelationName<D> as `${R}None` | `${R}Every`]?: Query
        } & {
          $or?: FilterQueryOf<D>[]
          $and?: FilterQueryOf<D>[]
        }
      >

/** `$select`: the fields records carry (the id always). */
export interface SelectQuery<F extends string> {
  $select?: F[]
}

/** What `get`, `update`, `patch` and `remove` take as `params.query`: conditions and `$select`. */
export type RecordQueryOf<D extends ResourceDefinition> =
  Untyped<D> extends true ? Query : Flatten<FilterQueryOf<D> & SelectQuery<ReadableFieldOf<D>>>

/**
 * What update, patch and remove of one record take as `params.query`: `$ifMatch`, the version the write was
 * made against (optimistic concurrency; socket.io clients send no `If-Match` header).
 */
export type WriteQueryOf<D extends ResourceDefinition> =
  Untyped<D> extends true ? Query : Flatten<RecordQueryOf<D> & { $ifMatch?: string | number }>

/** What `find` takes as `params.query`, as @feathersjs/knex's `AdapterQuery` with the resource's fields. */
export type QueryOf<D extends ResourceDefinition> =
  Untyped<D> extends true
    ? Query
    : Flatten<
        RecordQueryOf<D> & {
          $limit?: number
          $skip?: number
          $sort?: { [K in FilterableFieldOf<D>]?: 1 | -1 }
        }
      >

type StaticField<D extends ResourceDefinition, V> = {
  [K in keyof StaticOf<D>]-?: [Exclude<StaticOf<D>[K], null | undefined>] extends [V] ? K : never
}[keyof StaticOf<D>]

/** Fields an aggregate reads: stored or SQL-computed, never computed in JavaScript. */
type AggregateField<D extends ResourceDefinition> = Exclude<FieldName<D>, ComputedName<D>>
/** The aggregates that give values away apply to readable filterable fields; `count` to filterOnly ones too. */
type ValueField<D extends ResourceDefinition> = Exclude<
  FilterableFieldOf<D>,
  FieldsWhere<D, { filterOnly: true }>
>
type NumericField<D extends ResourceDefinition> = ValueField<D> & StaticField<D, number>
type OrderedField<D extends ResourceDefinition> = Exclude<ValueField<D>, StaticField<D, boolean>>
type GroupField<D extends ResourceDefinition> = Exclude<
  FieldsWhere<D, { groupBy: true }>,
  FieldsWhere<D, { filterOnly: true }> | ComputedName<D>
>

/** `having` with the resource's field names, each under the functions that apply to it. */
export type HavingOf<D extends ResourceDefinition> = {
  and?: HavingOf<D>[]
  or?: HavingOf<D>[]
  count?: { [K in FilterableFieldOf<D>]?: FieldComparison }
  countDistinct?: { [K in ValueField<D>]?: FieldComparison }
  sum?: { [K in NumericField<D>]?: FieldComparison }
  avg?: { [K in NumericField<D>]?: FieldComparison }
  min?: { [K in OrderedField<D>]?: FieldComparison }
  max?: { [K in OrderedField<D>]?: FieldComparison }
} & { [F in StatisticalFunction]?: { [K in NumericField<D>]?: FieldComparison } }

/** The fields of each aggregate function, where it applies: a request's lists, `previous`'s and `periodAgo`'s. */
type SelectionOf<D extends ResourceDefinition> = {
  count?: FilterableFieldOf<D>[]
  countDistinct?: ValueField<D>[]
  sum?: NumericField<D>[]
  avg?: NumericField<D>[]
  min?: OrderedField<D>[]
  max?: OrderedField<D>[]
} & { [F in StatisticalFunction]?: NumericField<D>[] }

/**
 * An aggregate request whose field names are the resource's, each where its function applies. `Having` is
 * for the service's own signatures, which must stay assignable to `AggregateRequest`: TypeScript cannot tell
 * that a map of optional comparisons over a generic resource's names is a `Record<string, FieldComparison>`.
 */
export type AggregateRequestOf<D extends ResourceDefinition, Having = HavingOf<D>> =
  Untyped<D> extends true
    ? AggregateRequest
    : Flatten<
        Omit<
          AggregateRequest,
          | 'groupBy'
          | 'count'
          | 'countDistinct'
          | 'sum'
          | 'avg'
          | 'min'
          | 'max'
          | StatisticalFunction
          | 'percentile'
          | 'having'
          | 'sorting'
          | 'partitionBy'
          | 'running'
          | 'previous'
          | 'periodAgo'
        > &
          SelectionOf<D> & {
            groupBy?: Array<GroupByField & { field: GroupField<D> }>
            percentile?: Array<{ p: number; fields: NumericField<D>[] }>
            having?: Having
            sorting?: Array<AggregateSortField & { field: AggregateField<D> }>
            partitionBy?: AggregateField<D>
            running?: Pick<SelectionOf<D>, 'count' | 'sum' | 'min' | 'max'>
            previous?: SelectionOf<D>
            periodAgo?: SelectionOf<D> & { period: DateBucket }
          }
      >

/** Params whose `query` is in Feathers' query syntax, typed for the resource by `Q` (e.g. `QueryOf<D>`). */
export type FeathersParams<Q> = Omit<ResourceParams, 'query' | 'queryModel'> & {
  query?: Q
  queryModel?: false
}

/** A service method's params: Feathers' syntax typed for the resource, or the query model (`queryModel`). */
export type ParamsOf<Q> = ResourceParams | FeathersParams<Q>

/** Every shape `find` answers in: the query model's pages and arrays, Feathers' page. */
export type FindResult<R> = Page<R> | R[] | PartitionedPages<R> | Paginated<R>

/**
 * What one overload of `find` answers for a typed resource. The untyped `ResourceDefinition`'s answer every
 * overload alike, as its single signature did, so that code written against it (a `Pick` of the service
 * implemented with that signature) still fits.
 */
export type FindAnswer<D extends ResourceDefinition, T> =
  Untyped<D> extends true ? FindResult<ResourceRecord> : T
