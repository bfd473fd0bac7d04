import type { Knex } from 'knex'
import type { Dialect } from '../dialect/dialect'
import type { Comparison, Condition, Exists, ParsedFilter } from './parsed-filter'
import type { SqlTarget } from './sql-target'

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

/**
 * `EXISTS (SELECT 1 FROM related [JOIN link] WHERE correlated AND live AND scope AND conditions)` for `some`,
 * its NOT for `none`; for `every`, NOT EXISTS a live related row within scope for which the conditions are not
 * TRUE. `NOT EXISTS (SELECT 1 WHERE conditions)` is that test (a WHERE keeps a row only when its condition is
 * TRUE, so it reads as `(conditions) IS NOT TRUE`), and it takes the conditions as knex builds them, on
 * SQLite, MariaDB and PostgreSQL alike: a related row whose compared field is NULL makes `every` false.
 */
function applyExists(
  builder: Knex.QueryBuilder,
  dialect: Dialect,
  exists: Exists,
  bound: readonly unknown[]
) {
  const { target, link, correlation, liveColumns, quantifier, conditions } = exists
  // Every related row meets no condition: true of every parent.
  if (quantifier === 'every' && conditions.length === 0) return
  const related = function related(this: Knex.QueryBuilder) {
    this.select(this.client.raw('1')).from({ [target.table]: target.resource.table })
    if (link) {
      this.join({ [link.target.table]: link.target.resource.table }, link.on[0], link.on[1])
    }
    this.whereRaw('?? = ??', correlation)
    for (const column of liveColumns) this.whereNull(column)
    applyConditions(this, dialect, exists.scope, bound)
    if (link) applyConditions(this, dialect, link.conditions, bound)
    if (quantifier !== 'every') applyConditions(this, dialect, conditions, bound)
    else {
      this.whereNotExists(function unmet() {
        this.select(this.client.raw('1'))
        applyConditions(this, dialect, conditions, bound)
      })
    }
  }
  if (quantifier === 'some') builder.whereExists(related)
  else builder.whereNotExists(related)
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
