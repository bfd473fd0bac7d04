import type { Query } from '@feathersjs/feathers'
import { badField } from '../common/errors'
import { checkPlainJson } from '../common/plain-json'
import type { ResolvedResource } from '../resource/resolved'
import { relationFilterKey, relationFilterRefusal } from '../resource/relation-quantifiers'
import type { FieldComparison, Filter, Scalar, SortAggregate, SortField } from '../model/query'

/**
 * Feathers' query syntax (`{ completed: false, priority: { $gte: 2 }, $or: [...], $sort, $limit, $skip,
 * $select }`) translated into the query model, so that callers other than the plugin's own routes (internal
 * calls, other services' hooks, socket.io, Feathers' REST client) go through the same compiler, with the same
 * authorization, defaultFilter and limits. Anything that cannot be honoured is a 400 naming it.
 */

/** Feathers' operators (as @feathersjs/knex names them) and the query model's equivalents. */
const OPERATORS: Record<string, keyof FieldComparison> = {
  $in: 'in',
  $nin: 'notIn',
  $lt: 'lt',
  $lte: 'lte',
  $gt: 'gt',
  $gte: 'gte',
  $ne: 'neq',
  $like: 'like',
  $notlike: 'notLike',
  $ilike: 'iLike'
}

const LIST_OPERATORS = new Set(['$in', '$nin'])

/**
 * How deep a query's JSON may nest, far beyond what the filter limits let through (16 levels of `$or`/`$and`,
 * 3 of relation filters): anything deeper is refused before any of it is read.
 */
const MAX_QUERY_NESTING = 100

/** The query's parts that are not filters. */
const SPECIAL = new Set(['$limit', '$skip', '$sort', '$select', '$or', '$and', '$ifMatch'])

export interface FeathersRequest {
  filter?: Filter
  sorting?: SortField[]
  /** `$select`: the fields records carry (and the id). */
  select?: string[]
  /** `$limit` as given, before paginate's default and maximum. */
  limit?: number
  skip: number
}

export interface FeathersSyntaxOptions {
  /** Which parameters the method takes: `find` all, the others only `$select` and filters. */
  collection: boolean
  /** External callers may not select what they can never read (hidden and filterOnly fields). */
  external: boolean
  /** The method reads or writes one record: `$ifMatch` names its version (see `service/record-version.ts`). */
  precondition?: boolean
}

/**
 * qs (Koa's and the REST client's query-string parser) turns lists longer than 20 into objects with index
 * keys; both are lists here.
 */
function asList(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value
  if (value && typeof value === 'object') {
    const keys = Object.keys(value)
    if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
      return keys.sort((a, b) => Number(a) - Number(b)).map((key) => (value as Record<string, unknown>)[key])
    }
  }
  return undefined
}

function nonNegativeInteger(value: unknown, name: string): number {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) {
    throw badField(name, 'must be a non-negative integer')
  }
  return number
}

export class FeathersQueryParser {
  /** The parsers of related resources, for relation filters. */
  private readonly related = new Map<ResolvedResource, FeathersQueryParser>()

  constructor(private readonly resource: ResolvedResource) {}

  parse(query: Query | undefined, options: FeathersSyntaxOptions): FeathersRequest {
    if (query === undefined || query === null) return { skip: 0 }
    if (typeof query !== 'object' || Array.isArray(query)) throw badField('query', 'must be an object')
    checkPlainJson(query, 'query', MAX_QUERY_NESTING)
    const request: FeathersRequest = { skip: 0 }
    for (const name of ['$limit', '$skip', '$sort']) {
      if (!options.collection && query[name] !== undefined) {
        throw badField(name, 'applies to find only')
      }
    }
    if (query.$ifMatch !== undefined && !options.precondition) {
      throw badField('$ifMatch', 'applies to one record: get, update, patch and remove')
    }
    if (query.$limit !== undefined) request.limit = nonNegativeInteger(query.$limit, '$limit')
    if (query.$skip !== undefined) request.skip = nonNegativeInteger(query.$skip, '$skip')
    if (query.$sort !== undefined) request.sorting = this.sorting(query.$sort)
    if (query.$select !== undefined) request.select = this.select(query.$select, options.external)
    request.filter = this.filter(query, '')
    return request
  }

  /**
   * `{ title: 1, created: -1 }`: keys in order, 1 ascending, -1 descending; a related record's field by its
   * dotted path (`'todoItem.title'`), a to-many relation's aggregate as `'count(subTasks)'` or
   * `'sum(subTasks.points)'`.
   */
  private sorting(sort: unknown): SortField[] {
    if (!sort || typeof sort !== 'object' || Array.isArray(sort)) {
      throw badField('$sort', 'must be an object of fields, e.g. { "title": 1 }')
    }
    return Object.entries(sort).map(([field, given]): SortField => {
      const value = typeof given === 'string' ? given.trim() : given
      if (value !== 1 && value !== -1 && value !== '1' && value !== '-1') {
        throw badField(`$sort.${field}`, 'must be 1 (ascending) or -1 (descending)')
      }
      const direction = Number(value) === 1 ? 'ASC' : 'DESC'
      // `sum(subTasks.points)`, `count(subTasks)`: an aggregate of a to-many relation's records.
      const aggregate = /^(\w+)\((.*)\)$/.exec(field)
      if (aggregate) return { field: aggregate[2], aggregate: aggregate[1] as SortAggregate, direction }
      // `todoItem.title`: a related record's field, checked (and named in a 400) by the service's sort.
      if (field.includes('.')) return { field, direction }
      const known = this.resource.fieldMap.get(field)
      if (!known || !known.filterable)
        throw badField(`$sort.${field}`, `${this.resource.name} cannot be sorted by "${field}"`)
      return { field, direction }
    })
  }

  private select(select: unknown, external: boolean): string[] {
    const names = asList(select)
    if (!names) throw badField('$select', 'must be a list of field names')
    return names.map((name, index) => {
      const field = typeof name === 'string' ? this.resource.fieldMap.get(name) : undefined
      if (!field || (external && !field.serialized)) {
        throw badField(`$select.${index}`, `"${String(name)}" is not a field of ${this.resource.name}`)
      }
      return field.name
    })
  }

  private filter(query: Record<string, unknown>, path: string): Filter | undefined {
    const conditions: Filter[] = []
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined) continue
      const at = path ? `${path}.${key}` : key
      if (key === '$or' || key === '$and') {
        const members = asList(value)
        if (!members) throw badField(at, 'must be a list of queries')
        const filters = members.map((member, index) => {
          if (!member || typeof member !== 'object' || Array.isArray(member)) {
            throw badField(`${at}.${index}`, 'must be a query object')
          }
          return this.filter(member as Record<string, unknown>, `${at}.${index}`) ?? {}
        })
        // `$or: []` restricts nothing, as in @feathersjs/knex; an empty member matches everything.
        conditions.push(key === '$or' ? { or: filters } : { and: filters })
        continue
      }
      if (key.startsWith('$')) {
        if (!path && SPECIAL.has(key)) continue
        throw badField(
          at,
          `unknown query parameter (use field names, $or, $and${path ? '' : ', $limit, $skip, $sort, $select'})`
        )
      }
      const found = relationFilterKey(this.resource, key)
      if (found?.relation.filterable) {
        // Refused here, where the path is the caller's (authorize's conditions are ANDed in before parsing).
        const refusal = relationFilterRefusal(this.resource, found)
        if (refusal) throw badField(at, refusal)
        conditions.push({ [key]: this.relationFilter(found.relation.target, value, at) })
        continue
      }
      conditions.push({ [key]: this.comparison(key, value, at) })
    }
    if (conditions.length === 0) return undefined
    return conditions.length === 1 ? conditions[0] : { and: conditions }
  }

  /**
   * `subTasks: { completed: false }` (`?subTasks[completed]=false`): a query of the related resource, which at
   * least one related record must match (`subTasksNone`: none, `subTasksEvery`: every one), as the query
   * model's relation filters.
   */
  private relationFilter(target: ResolvedResource, value: unknown, at: string): Filter {
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw badField(at, `must be a query of the related ${target.name} records`)
    }
    let parser = this.related.get(target)
    if (!parser) {
      parser = new FeathersQueryParser(target)
      this.related.set(target, parser)
    }
    return parser.filter(value as Record<string, unknown>, at) ?? {}
  }

  private comparison(name: string, value: unknown, at: string): FieldComparison {
    const field = this.resource.fieldMap.get(name)
    if (!field || !field.filterable || field.computed) {
      throw badField(at, `${this.resource.name} has no filterable field "${name}"`)
    }
    const operand = (operand: unknown, path: string): Scalar => {
      // Query strings carry every value as text; a boolean field reads `true` and `false` as booleans.
      if (field.kind === 'boolean' && (operand === 'true' || operand === 'false')) return operand === 'true'
      if (operand === null || (typeof operand === 'object' && !(operand instanceof Date))) {
        throw badField(path, 'must be a single value')
      }
      return operand as Scalar
    }
    if (value === null) return { is: null }
    if (typeof value !== 'object' || value instanceof Date) return { eq: operand(value, at) }
    if (Array.isArray(value))
      throw badField(at, 'must be a value or an object of operators, e.g. { "$in": [...] }')
    const comparison: FieldComparison = {}
    const entries = Object.entries(value as Record<string, unknown>)
    if (entries.length === 0) throw badField(at, 'must have at least one operator')
    for (const [operator, operandValue] of entries) {
      const path = `${at}.${operator}`
      const target = OPERATORS[operator]
      if (!target) throw badField(path, `unknown operator (use ${Object.keys(OPERATORS).join(', ')})`)
      if (operandValue === undefined) throw badField(path, 'must have a value')
      if (operator === '$ne' && operandValue === null) {
        comparison.isNot = null
      } else if (LIST_OPERATORS.has(operator)) {
        const list = asList(operandValue)
        if (!list) throw badField(path, 'must be a list')
        ;(comparison as Record<string, unknown>)[target] = list.map((item, index) =>
          operand(item, `${path}.${index}`)
        )
      } else {
        ;(comparison as Record<string, unknown>)[target] = operand(operandValue, path)
      }
    }
    return comparison
  }
}
