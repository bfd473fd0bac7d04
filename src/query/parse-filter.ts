import { badField } from '../common/errors'
import { checkUnicode, encodeValue, type DbValue } from '../resource/codec'
import type { ResolvedField, ResolvedResource } from '../resource/resolved'
import {
  relationFilterKey,
  relationFilterRefusal,
  type RelationFilterKey
} from '../resource/relation-quantifiers'
import { placeholderFor } from '../dialect/dialect'
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '../resource/query-limits'
import { COMPARISON_OPERATORS, type Between, type ComparisonOperator, type Filter } from '../model/query'
import { qualified, type SqlTarget } from './sql-target'
import { keyName } from './shape-key'
import type { Comparison, Condition, ParsedFilter } from './parsed-filter'
import { existsCondition, type RelationScopes } from './relation-filter'

/** An odd number of backslashes at the end: LIKE's escape character with nothing to escape. */
const UNFINISHED_ESCAPE = /(^|[^\\])(\\\\)*\\$/

const NO_FILTER: ParsedFilter = Object.freeze({
  key: '',
  values: Object.freeze([]),
  conditions: Object.freeze([])
})

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
    if (!filter || typeof filter !== 'object' || Array.isArray(filter))
      throw badField(path, 'must be a filter object')
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
        // A member without a condition holds for every record ({} is "everything", as the whole filter is),
        // so an `or` with one restricts nothing; the event matcher reads it the same way.
        if (key === 'or' && members.some((member) => member.length === 0)) continue
        conditions.push({ operator: key, members })
        continue
      }
      const relation = relationFilterKey(scope.target.resource, key)
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
   * and not soft-deleted; `subTasksNone` NOT EXISTS one, `subTasksEvery` NOT EXISTS one the filter does not
   * hold for. Counted against `maxRelationFilters` and nested at most `maxRelationDepth` deep.
   */
  private relationFilter(
    scope: Scope,
    { relation, quantifier }: RelationFilterKey,
    filter: Filter,
    path: string,
    depth: number
  ) {
    const refusal = relationFilterRefusal(scope.target.resource, { relation, quantifier })
    if (refusal) throw badField(path, refusal)
    const { maxRelationDepth, maxRelationFilters } = this.limits
    const relationDepth = scope.relationDepth + 1
    if (relationDepth > maxRelationDepth) {
      throw badField(path, `relation filters may nest at most ${maxRelationDepth} levels`)
    }
    if (++this.relationCount > maxRelationFilters) {
      throw badField(path, `a filter may hold at most ${maxRelationFilters} relation filters`)
    }
    const number = this.relationCount
    const exists = existsCondition(scope.target, relation, quantifier, number)
    const inner: Scope = { target: exists.target, relationDepth }
    // The quantifier changes the SQL, and `every` tells the filter's conditions from the scope's.
    this.key += `${keyName(relation)}${quantifier === 'some' ? '' : `!${quantifier}`}(`
    exists.conditions = this.conjunction(inner, filter, path, depth + 1)
    this.key += ' scope:'
    const scoped = this.scopeOf(relation.target)
    if (scoped) exists.scope = this.conjunction(inner, scoped, path, depth + 1)
    if (exists.link) {
      const linkScope = this.scopeOf(exists.link.target.resource)
      const link: Scope = { target: exists.link.target, relationDepth }
      // The key tells the link's conditions from the related record's (their fields may share names).
      this.key += ' link:'
      if (linkScope) exists.link.conditions.push(...this.conjunction(link, linkScope, path, depth + 1))
    }
    this.key += ')'
    return exists
  }

  /** The filter of what the caller may read of `resource`, worked out before parsing. */
  private scopeOf(resource: ResolvedResource) {
    if (!this.scopes?.has(resource)) {
      throw new Error(
        `The scope of ${resource.name} was not worked out before its relation filter was parsed`
      )
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

  /** A LIKE pattern of a text field, bound as the dialect matches it (`likeValue` when case-sensitive). */
  private pattern(
    target: SqlTarget,
    field: ResolvedField,
    operator: ComparisonOperator,
    value: unknown,
    path: string
  ) {
    const { maxPatternLength } = this.limits
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
  }

  private comparison(
    target: SqlTarget,
    field: ResolvedField,
    operator: ComparisonOperator,
    value: unknown,
    path: string
  ): Comparison {
    const { maxComparisons, maxListLength } = this.limits
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
          if (field.kind !== 'boolean')
            throw badField(path, 'only boolean fields can be compared with true or false')
        }
        comparison.truth = value
        this.key += `:${value}`
        break
      case 'like':
      case 'notLike':
      case 'iLike':
      case 'notILike':
        this.pattern(target, field, operator, value, path)
        break
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
    conditions.push(
      ...parser.conjunction({ target: link.target, relationDepth: 0 }, link.filter, 'through', 0)
    )
  }
  return parser.result(conditions)
}
