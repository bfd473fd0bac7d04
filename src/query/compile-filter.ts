import type { Knex } from 'knex'
import { badField } from '../errors'
import { encodeValue } from '../resource/codec'
import type { ResolvedField, ResolvedResource } from '../resource/resolve'
import type { Dialect } from './dialect'
import { COMPARISON_OPERATORS, type Between, type FieldComparison, type Filter } from './model'

/** Bounds what one request can make the database do. */
const MAX_FILTER_DEPTH = 16
const MAX_LIST_LENGTH = 1000

export interface SqlTarget {
  resource: ResolvedResource
  dialect: Dialect
  /** Table name or alias columns are qualified with. */
  table: string
}

export function qualified(target: SqlTarget, field: ResolvedField) {
  return `${target.table}.${field.column}`
}

function filterField(target: SqlTarget, name: string, path: string) {
  const field = target.resource.fieldMap.get(name)
  if (!field || field.computed) throw badField(path, `${target.resource.name} has no filterable field "${name}"`)
  return field
}

function isString(field: ResolvedField) {
  return field.kind === 'string' || field.role === 'id'
}

function applyOperator(
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  field: ResolvedField,
  operator: keyof FieldComparison,
  value: unknown,
  path: string
) {
  const column = qualified(target, field)
  const encode = (item: unknown, at = path): Knex.Value => {
    if (item === null || item === undefined) throw badField(at, 'must not be null (use is: null)')
    return encodeValue(field, item, at)
  }
  switch (operator) {
    case 'is':
    case 'isNot': {
      const negate = operator === 'isNot' ? 'NOT ' : ''
      if (value === null) return negate ? builder.whereNotNull(column) : builder.whereNull(column)
      if (typeof value !== 'boolean') throw badField(path, 'must be true, false or null')
      if (field.kind !== 'boolean') throw badField(path, 'only boolean fields can be compared with true or false')
      return builder.whereRaw(`?? IS ${negate}${value ? 'TRUE' : 'FALSE'}`, [column])
    }
    case 'eq':
      return builder.where(column, encode(value))
    case 'neq':
      return builder.whereNot(column, encode(value))
    case 'gt':
      return builder.where(column, '>', encode(value))
    case 'gte':
      return builder.where(column, '>=', encode(value))
    case 'lt':
      return builder.where(column, '<', encode(value))
    case 'lte':
      return builder.where(column, '<=', encode(value))
    case 'like':
    case 'notLike':
    case 'iLike':
    case 'notILike': {
      if (!isString(field)) throw badField(path, `${operator} applies to text fields only`)
      if (typeof value !== 'string') throw badField(path, 'must be a string pattern')
      const match = operator === 'like' || operator === 'notLike' ? target.dialect.like : target.dialect.iLike
      const raw = match(column, value)
      return operator.startsWith('not') ? builder.whereNot(raw) : builder.where(raw)
    }
    case 'in':
    case 'notIn': {
      if (!Array.isArray(value)) throw badField(path, 'must be a list')
      if (value.length > MAX_LIST_LENGTH) throw badField(path, `must have at most ${MAX_LIST_LENGTH} values`)
      const values = value.map((item, index) => encode(item, `${path}.${index}`))
      return operator === 'in' ? builder.whereIn(column, values) : builder.whereNotIn(column, values)
    }
    case 'between':
    case 'notBetween': {
      const range = value as Between
      if (!range || typeof range !== 'object') throw badField(path, 'must be {lower, upper}')
      // Knex types its between helpers for numbers only; dates and strings work the same in SQL.
      const pair = [encode(range.lower, `${path}.lower`), encode(range.upper, `${path}.upper`)] as [number, number]
      return operator === 'between' ? builder.whereBetween(column, pair) : builder.whereNotBetween(column, pair)
    }
  }
}

function applyComparison(
  builder: Knex.QueryBuilder,
  target: SqlTarget,
  field: ResolvedField,
  comparison: unknown,
  path: string
) {
  if (!comparison || typeof comparison !== 'object' || Array.isArray(comparison)) {
    throw badField(path, 'must be an object of operators, e.g. {eq: value}')
  }
  for (const [operator, value] of Object.entries(comparison)) {
    if (value === undefined) continue
    if (!COMPARISON_OPERATORS.includes(operator as keyof FieldComparison)) {
      throw badField(`${path}.${operator}`, `unknown operator (use ${COMPARISON_OPERATORS.join(', ')})`)
    }
    applyOperator(builder, target, field, operator as keyof FieldComparison, value, `${path}.${operator}`)
  }
}

function applyFilterAt(builder: Knex.QueryBuilder, target: SqlTarget, filter: Filter, path: string, depth: number) {
  if (depth > MAX_FILTER_DEPTH) throw badField(path, `filters may nest at most ${MAX_FILTER_DEPTH} levels`)
  if (!filter || typeof filter !== 'object' || Array.isArray(filter)) throw badField(path, 'must be a filter object')
  const at = (key: string) => (path ? `${path}.${key}` : key)
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined) continue
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value)) throw badField(at(key), 'must be a list of filters')
      if (value.length === 0) continue
      builder.where(function group() {
        value.forEach((sub, index) => {
          const nested = (inner: Knex.QueryBuilder) => applyFilterAt(inner, target, sub, at(`${key}.${index}`), depth + 1)
          if (key === 'and') this.andWhere(nested)
          else this.orWhere(nested)
        })
      })
      continue
    }
    applyComparison(builder, target, filterField(target, key, at(key)), value, at(key))
  }
  return builder
}

/** Adds the filter to the builder's WHERE clause. Unknown fields, operators and ill-typed values are 400s. */
export function applyFilter(builder: Knex.QueryBuilder, target: SqlTarget, filter: Filter | undefined) {
  if (!filter) return builder
  return builder.where((inner) => {
    applyFilterAt(inner, target, filter, '', 0)
  })
}
