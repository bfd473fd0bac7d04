import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { checkUnicode, encodeValue, type DbValue } from '../resource/codec'
import type { ResolvedField, ResolvedRelation, ResolvedResource } from '../resource/resolved'
import { placeholderFor, type Dialect, type SqlColumn } from '../dialect/dialect'
import { fieldExpression } from './sql-fields'
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '../resource/query-limits'
import { COMPARISON_OPERATORS, type Between, type ComparisonOperator, type Filter } from '../model/query'
import { existsCondition, type Exists, type RelationScopes } from './relation-filter'

/** An odd number of backslashes at the end: LIKE's escape character with nothing to escape. */
const UNFINISHED_ESCAPE = /(^|[^\\])(\\\\)*\\$/

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

/** One operator on one column; its values are `bound[first]` to `bound[first + count - 1]`. */
interface Comparison {
  column: SqlColumn
  operator: ComparisonOperator
  first: number
  count: number
  /** The operand of `is` / `isNot`, which is part of the SQL text rather than bound. */
  truth?: boolean | null
  /** Where each value is bound: `?`, or typed as the dialect binds integers (`placeholderFor`). */
  parameter: string
}

/** `and` / `or` over sub-filters, each a conjunction of its own conditions. */
interface Group {
  operator: 'and' | 'or'
  members: Condition[][]
}

export type Condition = Comparison | Group | Exists

/**
 * A filter checked and encoded, apart from the knex calls that add it to a statement. Two filters with the
 * same `key` compile to the same SQL text whatever their values, which is what lets a statement be compiled
 * once per shape and run with each call's values.
 */
export interface ParsedFilter {
  /** The SQL shape: fields, operators, grouping, list lengths and `is` operands, never a bound value. */
  key: string
  /** Encoded values, in the order the conditions bind them. */
  values: readonly DbValue[]
  conditions: readonly Condition[]
}

const keyNames = new WeakMap<object, string>()

/**
 * A field in a statement's shape key. Field names are arbitrary strings; JSON quoting keeps one name from
 * reading as another key's syntax.
 */
export function keyName(field: { name: string }) {
  let name = keyNames.get(field)
  if (name === undefined) {
    name = JSON.stringify(field.name)
    keyNames.set(field, name)
  }
  return name
}

const NO_FILTER: ParsedFilter = Object.freeze({ key: '', values: Object.freeze([]), conditions: Object.freeze([]) })

/** Where a filter's conditions apply: the statement's own table, or a related table inside EXISTS. */
interface Scope {
  target: SqlTarget
  /** Relation filters around this one. */
  relationDepth: number
}

class FilterParser {
  readonly values: DbValue[] = []
  private key = ''
  private comparisonCount = 0
  /** Values bound so far, each member of a list counted. */
  private valueCount = 0
  /** Relation filters so far (EXISTS subqueries), which also name their tables' aliases. */
  private relationCount = 0

  constructor(
    private readonly limits: Readonly<Required<QueryLimits>>,
    private readonly scopes: RelationScopes | undefined
  ) {}

  /** Marks where conditions on another table begin in the key. */
  mark(text: string) {
    this.key += text
  }

  result(conditions: Condition[]): ParsedFilter {
    return { key: this.key, values: this.values, conditions }
  }

  conjunction(scope: Scope, filter: Filter, path: string, depth: number): Condition[] {
    const { maxFilterDepth, maxComparisons } = this.limits
    if (depth > maxFilterDepth) throw badField(path, `filters may nest at most ${maxFilterDepth} levels`)
    if (!filter || typeof filter !== 'object' || Array.isArray(filter)) throw badField(path, 'must be a filter object')
    const conditions: Condition[] = []
    for (const key of Object.keys(filter)) {
      const value = filter[key]
      if (value === undefined) continue
      const at = path ? `${path}.${key}` : key
      if (key === 'and' || key === 'or') {
        if (!Array.isArray(value)) throw badField(at, 'must be a list of filters')
        if (value.length === 0) continue
        // A member without a comparison restricts nothing, so more members than comparisons are of no use.
        if (value.length > maxComparisons) throw badField(at, `must have at most ${maxComparisons} members`)
        this.key += `${key}(`
        const members = value.map((sub, index) => {
          if (index > 0) this.key += '|'
          return this.conjunction(scope, sub, `${at}.${index}`, depth + 1)
        })
        this.key += ')'
        conditions.push({ operator: key, members })
        continue
      }
      const { resource } = scope.target
      const relation = resource.fieldMap.has(key) ? undefined : resource.relationMap.get(key)
      if (relation) {
        conditions.push(this.relationFilter(scope, relation, value as Filter, at, depth))
        continue
      }
      this.comparisons(scope.target, this.filterField(scope.target, key, at), value, at, conditions)
    }
    return conditions
  }

  /**
   * `{ subTasks: {...} }`: EXISTS a related record matching the filter, within what the caller may read of
   * the related resource (its scope: authorize and defaultFilter, and the join resource's for many-to-many)
   * and not soft-deleted. Counted against `maxRelationFilters` and nested at most `maxRelationDepth` deep.
   */
  private relationFilter(scope: Scope, relation: ResolvedRelation, filter: Filter, path: string, depth: number) {
    const { maxRelationDepth, maxRelationFilters } = this.limits
    const relationDepth = scope.relationDepth + 1
    if (relationDepth > maxRelationDepth) {
      throw badField(path, `relation filters may nest at most ${maxRelationDepth} levels`)
    }
    if (++this.relationCount > maxRelationFilters) {
      throw badField(path, `a filter may hold at most ${maxRelationFilters} relation filters`)
    }
    const number = this.relationCount
    const exists = existsCondition(scope.target, relation, number)
    const inner: Scope = { target: exists.target, relationDepth }
    this.key += `${keyName(relation)}(`
    const conditions = this.conjunction(inner, filter, path, depth + 1)
    const scoped = this.scopeOf(relation.target)
    if (scoped) conditions.push(...this.conjunction(inner, scoped, path, depth + 1))
    if (exists.link) {
      const linkScope = this.scopeOf(exists.link.target.resource)
      const link: Scope = { target: exists.link.target, relationDepth }
      // The key tells the link's conditions from the related record's (their fields may share names).
      this.key += ' link:'
      if (linkScope) exists.link.conditions.push(...this.conjunction(link, linkScope, path, depth + 1))
    }
    this.key += ')'
    exists.conditions = conditions
    return exists
  }

  /** The filter of what the caller may read of `resource`, worked out before parsing. */
  private scopeOf(resource: ResolvedResource) {
    if (!this.scopes?.has(resource)) {
      throw new Error(`The scope of ${resource.name} was not worked out before its relation filter was parsed`)
    }
    return this.scopes.get(resource)
  }

  private filterField(target: SqlTarget, name: string, path: string) {
    const { resource } = target
    const field = resource.fieldMap.get(name)
    if (!field || field.computed) throw badField(path, `${resource.name} has no filterable field "${name}"`)
    return field
  }

  private comparisons(
    target: SqlTarget,
    field: ResolvedField,
    comparison: unknown,
    path: string,
    into: Condition[]
  ) {
    if (!comparison || typeof comparison !== 'object' || Array.isArray(comparison)) {
      throw badField(path, 'must be an object of operators, e.g. {eq: value}')
    }
    for (const [operator, value] of Object.entries(comparison)) {
      if (value === undefined) continue
      if (!COMPARISON_OPERATORS.includes(operator as ComparisonOperator)) {
        throw badField(`${path}.${operator}`, `unknown operator (use ${COMPARISON_OPERATORS.join(', ')})`)
      }
      into.push(this.comparison(target, field, operator as ComparisonOperator, value, `${path}.${operator}`))
    }
  }

  /** Counts `count` more values against the filter's limit. */
  private counted(count: number, path: string) {
    this.valueCount += count
    const { maxFilterValues } = this.limits
    if (this.valueCount > maxFilterValues) {
      throw badField(path, `a filter may bind at most ${maxFilterValues} values, list members included`)
    }
  }

  private encoded(field: ResolvedField, value: unknown, path: string) {
    if (value === null || value === undefined) throw badField(path, 'must not be null (use is: null)')
    return encodeValue(field, value, path)
  }

  private bind(field: ResolvedField, value: unknown, path: string) {
    this.values.push(this.encoded(field, value, path))
  }

  private comparison(
    target: SqlTarget,
    field: ResolvedField,
    operator: ComparisonOperator,
    value: unknown,
    path: string
  ): Comparison {
    const { maxComparisons, maxListLength, maxPatternLength } = this.limits
    if (++this.comparisonCount > maxComparisons) {
      throw badField(path, `a filter may hold at most ${maxComparisons} comparisons`)
    }
    const first = this.values.length
    this.key += `${keyName(field)}.${operator}`
    const comparison: Comparison = {
      column: qualified(target, field),
      operator,
      first,
      count: 0,
      parameter: placeholderFor(target.dialect, field.kind)
    }
    switch (operator) {
      case 'is':
      case 'isNot':
        if (value !== null) {
          if (typeof value !== 'boolean') throw badField(path, 'must be true, false or null')
          if (field.kind !== 'boolean') throw badField(path, 'only boolean fields can be compared with true or false')
        }
        comparison.truth = value
        this.key += `:${value}`
        break
      case 'like':
      case 'notLike':
      case 'iLike':
      case 'notILike': {
        if (field.kind !== 'string' && field.role !== 'id') {
          throw badField(path, `${operator} applies to text fields only`)
        }
        if (typeof value !== 'string') throw badField(path, 'must be a string pattern')
        if (value.length > maxPatternLength) {
          throw badField(path, `must be at most ${maxPatternLength} characters long`)
        }
        checkUnicode(value, path)
        if (UNFINISHED_ESCAPE.test(value)) {
          throw badField(path, 'must not end with a lone \\ (it escapes the next character; \\\\ is a backslash)')
        }
        const caseSensitive = operator === 'like' || operator === 'notLike'
        this.counted(1, path)
        this.values.push(caseSensitive ? target.dialect.likeValue(value) : value)
        break
      }
      case 'in':
      case 'notIn': {
        if (!Array.isArray(value)) throw badField(path, 'must be a list')
        if (value.length > maxListLength) throw badField(path, `must have at most ${maxListLength} values`)
        this.counted(value.length, path)
        const members = value.map((item, index) => this.encoded(field, item, `${path}.${index}`))
        this.values.push(...target.dialect.list.bind(members))
        // The number of values bound, which the dialect keeps to a few lengths.
        this.key += `:${this.values.length - first}`
        break
      }
      case 'between':
      case 'notBetween': {
        const range = value as Between
        if (!range || typeof range !== 'object') throw badField(path, 'must be {lower, upper}')
        this.counted(2, path)
        this.bind(field, range.lower, `${path}.lower`)
        this.bind(field, range.upper, `${path}.upper`)
        break
      }
      default:
        this.counted(1, path)
        this.bind(field, value, path)
    }
    this.key += ';'
    comparison.count = this.values.length - first
    return comparison
  }
}

/**
 * Checks and encodes a filter: unknown fields, operators and ill-typed values are 400s naming their path.
 * Nothing reaches the database until every value has passed.
 */
export function parseFilter(
  target: SqlTarget,
  filter: Filter | undefined,
  limits: Readonly<Required<QueryLimits>> = DEFAULT_QUERY_LIMITS,
  scopes?: RelationScopes,
  link?: { target: SqlTarget; filter: Filter }
): ParsedFilter {
  if (!filter && !link) return NO_FILTER
  const parser = new FilterParser(limits, scopes)
  const conditions = filter ? parser.conjunction({ target, relationDepth: 0 }, filter, '', 0) : []
  // The links of a many-to-many read: conditions on the join resource's table, joined in the statement.
  if (link) {
    parser.mark(' link:')
    conditions.push(...parser.conjunction({ target: link.target, relationDepth: 0 }, link.filter, 'through', 0))
  }
  return parser.result(conditions)
}

/** `column operator value`, the value bound as `parameter` (`?`, or a typed `?::bigint`). */
export function compare(
  builder: Knex.QueryBuilder,
  column: string,
  operator: string,
  value: Knex.Value,
  parameter: string
) {
  if (parameter === '?') return builder.where(column, operator, value)
  return builder.whereRaw(`?? ${operator} ${parameter}`, [column, value])
}

function applyComparison(
  builder: Knex.QueryBuilder,
  dialect: Dialect,
  comparison: Comparison,
  bound: readonly unknown[]
) {
  const { operator, first } = comparison
  // Knex takes a Raw (a SQL-computed field) wherever it takes a column name, though its types say names.
  const column = comparison.column as string
  const value = bound[first] as Knex.Value
  const { parameter } = comparison
  switch (operator) {
    case 'is':
    case 'isNot': {
      const negate = operator === 'isNot'
      if (comparison.truth === null) return negate ? builder.whereNotNull(column) : builder.whereNull(column)
      // `=` rather than `IS TRUE`/`IS FALSE`, which MariaDB cannot answer from an index; the same rows (NULL
      // is neither), and `isNot` is the other value or NULL.
      const [truth, other] = comparison.truth ? ['TRUE', 'FALSE'] : ['FALSE', 'TRUE']
      if (!negate) return builder.whereRaw(`?? = ${truth}`, [column])
      return builder.whereRaw(`(?? = ${other} OR ?? IS NULL)`, [column, column])
    }
    case 'eq':
      return compare(builder, column, '=', value, parameter)
    case 'neq':
      return compare(builder, column, '<>', value, parameter)
    case 'gt':
      return compare(builder, column, '>', value, parameter)
    case 'gte':
      return compare(builder, column, '>=', value, parameter)
    case 'lt':
      return compare(builder, column, '<', value, parameter)
    case 'lte':
      return compare(builder, column, '<=', value, parameter)
    case 'like':
      return builder.where(dialect.like(column, value))
    case 'notLike':
      return builder.whereNot(dialect.like(column, value))
    case 'iLike':
      return builder.where(dialect.iLike(column, value))
    case 'notILike':
      return builder.whereNot(dialect.iLike(column, value))
    case 'in':
    case 'notIn': {
      const values = bound.slice(first, first + comparison.count) as Knex.Value[]
      return dialect.list.where(builder, column, values, operator === 'notIn', parameter !== '?')
    }
    case 'between':
    case 'notBetween': {
      const not = operator === 'notBetween' ? 'NOT ' : ''
      const range = `?? ${not}BETWEEN ${parameter} AND ${parameter}`
      return builder.whereRaw(range, [column, bound[first] as Knex.Value, bound[first + 1] as Knex.Value])
    }
  }
}

function applyConditions(
  builder: Knex.QueryBuilder,
  dialect: Dialect,
  conditions: readonly Condition[],
  bound: readonly unknown[]
) {
  for (const condition of conditions) {
    if ('column' in condition) {
      applyComparison(builder, dialect, condition, bound)
      continue
    }
    if ('exists' in condition) {
      applyExists(builder, dialect, condition, bound)
      continue
    }
    const { operator, members } = condition
    builder.where(function group() {
      for (const member of members) {
        const nested = (inner: Knex.QueryBuilder) => applyConditions(inner, dialect, member, bound)
        if (operator === 'and') this.andWhere(nested)
        else this.orWhere(nested)
      }
    })
  }
  return builder
}

/** `EXISTS (SELECT 1 FROM related [JOIN link] WHERE correlated AND live AND conditions)`. */
function applyExists(builder: Knex.QueryBuilder, dialect: Dialect, exists: Exists, bound: readonly unknown[]) {
  builder.whereExists(function related() {
    const { target, link, correlation, liveColumns } = exists
    this.select(this.client.raw('1')).from({ [target.table]: target.resource.table })
    if (link) {
      this.join({ [link.target.table]: link.target.resource.table }, link.on[0], link.on[1])
    }
    this.whereRaw('?? = ??', correlation)
    for (const column of liveColumns) this.whereNull(column)
    applyConditions(this, dialect, exists.conditions, bound)
    if (link) applyConditions(this, dialect, link.conditions, bound)
  })
}

/**
 * Adds a parsed filter to the builder's WHERE clause, binding `bound` in place of its values: the filter's
 * own values, or stand-ins when a statement is compiled once for every filter of the same shape.
 */
export function applyParsedFilter(
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  parsed: ParsedFilter,
  bound: readonly unknown[] = parsed.values
) {
  if (parsed.conditions.length === 0) return builder
  return builder.where((inner) => {
    applyConditions(inner, target.dialect, parsed.conditions, bound)
  })
}

/**
 * Adds the filter to the builder's WHERE clause. Unknown fields, operators and ill-typed values are 400s.
 * A filter with relation filters needs the related resources' scopes (see `relationScopes`).
 */
export function applyFilter(
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  filter: Filter | undefined,
  scopes?: RelationScopes
) {
  return applyParsedFilter(builder, target, parseFilter(target, filter, DEFAULT_QUERY_LIMITS, scopes))
}
