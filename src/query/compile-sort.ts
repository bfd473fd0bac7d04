import { badField } from '../common/errors'
import type { ResolvedField } from '../resource/resolved'
import type { SqlColumn } from '../dialect/dialect'
import type { SortField } from '../model/query'
import { keyName } from './shape-key'
import { qualified, type SqlTarget } from './sql-target'

export interface SortTerm {
  field: ResolvedField
  /** Qualified column, or a SQL-computed field's expression. */
  column: SqlColumn
  direction: 'ASC' | 'DESC'
  /** Only meaningful for nullable fields. */
  nullsFirst: boolean
}

/**
 * The validated sort terms, with the id appended as the final tie-breaker so that paging is stable.
 * Without an explicit `nulls`, NULLs sort as the smallest value (what SQLite and MySQL do).
 */
export function sortTerms(target: SqlTarget, sorting: SortField[] = []): SortTerm[] {
  const { resource } = target
  const entries = sorting.some((sort) => sort.field === resource.idField.name)
    ? sorting
    : [...sorting, { field: resource.idField.name, direction: 'ASC' as const }]
  return entries.map((sort, index) => {
    const path = `sorting.${index}`
    const field = resource.fieldMap.get(sort.field)
    if (!field || field.computed)
      throw badField(`${path}.field`, `${resource.name} cannot be sorted by "${sort.field}"`)
    if (sort.direction !== 'ASC' && sort.direction !== 'DESC')
      throw badField(`${path}.direction`, 'must be ASC or DESC')
    if (sort.nulls !== undefined && sort.nulls !== 'NULLS_FIRST' && sort.nulls !== 'NULLS_LAST') {
      throw badField(`${path}.nulls`, 'must be NULLS_FIRST or NULLS_LAST')
    }
    const nulls = sort.nulls ?? (sort.direction === 'ASC' ? 'NULLS_FIRST' : 'NULLS_LAST')
    return {
      field,
      column: qualified(target, field),
      direction: sort.direction,
      nullsFirst: nulls === 'NULLS_FIRST'
    }
  })
}

/**
 * ORDER BY terms as SQL, so that the same order serves ORDER BY and window functions. NULL placement is
 * explicit (`(col IS NULL)` first) because databases disagree on the default and MySQL has no NULLS FIRST.
 */
export function orderSql(terms: SortTerm[]) {
  const sql: string[] = []
  const bindings: SqlColumn[] = []
  for (const term of terms) {
    if (term.field.nullable) {
      sql.push(`(?? IS NULL) ${term.nullsFirst ? 'DESC' : 'ASC'}`)
      bindings.push(term.column)
    }
    sql.push(`?? ${term.direction}`)
    bindings.push(term.column)
  }
  return { sql: sql.join(', '), bindings }
}

/** The order in a statement's shape key: equal keys, equal ORDER BY. */
export function orderKey(terms: SortTerm[]) {
  let key = ''
  for (const term of terms)
    key += `${keyName(term.field)} ${term.direction} ${term.nullsFirst ? 'first' : 'last'},`
  return key
}
