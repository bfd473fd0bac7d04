/**
 * The transport-free query model. REST query strings, GraphQL arguments and CSV export requests are all
 * translated into these shapes, and one compiler turns them into SQL.
 */

export type Scalar = string | number | boolean | Date

export interface Between {
  lower: Scalar
  upper: Scalar
}

/** Operators on one field. Several operators in one comparison are ANDed (`{gte: 1, lte: 3}` is a range). */
export interface FieldComparison {
  is?: boolean | null
  isNot?: boolean | null
  eq?: Scalar
  neq?: Scalar
  gt?: Scalar
  gte?: Scalar
  lt?: Scalar
  lte?: Scalar
  like?: string
  notLike?: string
  iLike?: string
  notILike?: string
  in?: Scalar[]
  notIn?: Scalar[]
  between?: Between
  notBetween?: Between
}

export type ComparisonOperator = keyof FieldComparison

export const COMPARISON_OPERATORS: ComparisonOperator[] = [
  'is',
  'isNot',
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'notLike',
  'iLike',
  'notILike',
  'in',
  'notIn',
  'between',
  'notBetween'
]

/**
 * `{and, or}` group sub-filters; every other key is a field name with its comparison, or a relation name with
 * a filter of the related resource: at least one related record (that the caller may read) matches it.
 * Siblings are ANDed.
 */
export interface Filter {
  and?: Filter[]
  or?: Filter[]
  [field: string]: FieldComparison | Filter | Filter[] | undefined
}

export type SortDirection = 'ASC' | 'DESC'
export type SortNulls = 'NULLS_FIRST' | 'NULLS_LAST'

/** The aggregates of a to-many relation's records a parent can be sorted by. */
export const SORT_AGGREGATES = ['count', 'countDistinct', 'sum', 'avg', 'min', 'max'] as const
export type SortAggregate = (typeof SORT_AGGREGATES)[number]

/**
 * One sort key. `field` is a field of the resource, or a dotted path: through to-one relations to a related
 * record's field (`owner.name`, `todoItem.owner.name`), or with `aggregate` from a to-many relation to a
 * field of its records (`subTasks.points` with `sum`; `subTasks` alone with `count`).
 */
export interface SortField {
  field: string
  direction: SortDirection
  nulls?: SortNulls
  /** Sort by this aggregate of a to-many relation's records (which `field` names). */
  aggregate?: SortAggregate
}

export interface OffsetPaging {
  limit: number
  offset?: number
}

/** What `params.query` holds for every method of a resource service. */
export interface ResourceQuery {
  filter?: Filter
  sorting?: SortField[]
  /** Without paging, `find` returns every matching record as an array. */
  paging?: OffsetPaging
  /** Free-form search text; the core gives it no meaning, a hook translates it into `filter`. */
  search?: string
  /** Run the count query and return `totalCount`. */
  totalCount?: boolean
  /** Apply paging per distinct value of this field (one page per parent when loading relations). */
  partitionBy?: string
  /**
   * Many-to-many: the records linked to `parents` through a join resource, each once per parent it is linked
   * to, paged (`find`) or aggregated (`aggregate`) per parent, like `partitionBy`.
   */
  through?: LinkQuery
  /**
   * The fields the caller needs (GraphQL sets the ones a client selected). Records then carry those, the id
   * and what the statement needs (partition and keyset sort keys), like Feathers' `$select`; a computed field
   * brings every field. A hook that needs another field adds it here. Absent: every field.
   */
  select?: string[]
  /**
   * The fields the caller reads of a write's answer (GraphQL's selection of a mutation): checked against its
   * field rules as `select` is, before anything is written, without narrowing what the write answers and
   * announces.
   */
  answerFields?: string[]
  /**
   * Keyset paging: `paging.limit` records after (or before) a position in the order, found by the values of
   * the sort fields and the id rather than by counting (how the CSV export reads every record batch by batch,
   * and GraphQL's keyset cursors). The page answers with `keysetFields` and the `keyset` of its next page.
   * With `partitionBy`, the same position in every partition.
   */
  keyset?: Keyset
}

/** The links a many-to-many relation reads through: records of the join resource. */
export interface LinkQuery {
  /** The join resource's name. */
  resource: string
  /** Its field holding the parent's id, by which pages and aggregates are partitioned. */
  foreignKey: string
  /** Its field holding the id of this resource's record. */
  otherKey: string
  /** The parents' ids. */
  parents: Scalar[]
}

/**
 * Where a keyset page starts: after the record whose sort fields and id hold the values of `after` (by
 * field name, as records hold them); nothing: at the start. `backward` reads the `limit` records before
 * `before` (or the last ones), returned in the query's order.
 */
export interface Keyset {
  after?: Record<string, unknown>
  before?: Record<string, unknown>
  backward?: boolean
}
