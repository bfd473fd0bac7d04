import type { Knex } from 'knex'
import { badField } from '../errors'
import type { ResolvedField } from '../resource/resolve'
import type { SortField } from './model'
import { keyName, qualified, type SqlTarget } from './compile-filter'

export interface SortTerm {
  field: ResolvedField
  /** Qualified column. */
  column: string
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
    if (!field || field.computed) throw badField(`${path}.field`, `${resource.name} cannot be sorted by "${sort.field}"`)
    if (sort.direction !== 'ASC' && sort.direction !== 'DESC') throw badField(`${path}.direction`, 'must be ASC or DESC')
    if (sort.nulls !== undefined && sort.nulls !== 'NULLS_FIRST' && sort.nulls !== 'NULLS_LAST') {
      throw badField(`${path}.nulls`, 'must be NULLS_FIRST or NULLS_LAST')
    }
    const nulls = sort.nulls ?? (sort.direction === 'ASC' ? 'NULLS_FIRST' : 'NULLS_LAST')
    return { field, column: qualified(target, field), direction: sort.direction, nullsFirst: nulls === 'NULLS_FIRST' }
  })
}

/**
 * ORDER BY terms as SQL, so that the same order serves ORDER BY and window functions. NULL placement is
 * explicit (`(col IS NULL)` first) because databases disagree on the default and MySQL has no NULLS FIRST.
 */
export function orderSql(terms: SortTerm[]) {
  const sql: string[] = []
  const bindings: string[] = []
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
  for (const term of terms) key += `${keyName(term.field)} ${term.direction} ${term.nullsFirst ? 'first' : 'last'},`
  return key
}

/** Restricts the builder to rows that come after `row` in the order of `terms` (keyset paging). */
export function whereAfter(builder: Knex.QueryBuilder, terms: SortTerm[], row: Record<string, unknown>) {
  const valueOf = (term: SortTerm) => row[term.field.column] ?? null
  return builder.where((any) => {
    terms.forEach((term, index) => {
      any.orWhere((all) => {
        for (const previous of terms.slice(0, index)) {
          const value = valueOf(previous)
          if (value === null) all.whereNull(previous.column)
          else all.where(previous.column, value as Knex.Value)
        }
        const value = valueOf(term)
        const later = term.direction === 'ASC' ? '>' : '<'
        if (!term.field.nullable) all.where(term.column, later, value as Knex.Value)
        else if (term.nullsFirst) {
          if (value === null) all.whereNotNull(term.column)
          else all.where(term.column, later, value as Knex.Value)
        } else if (value === null) all.whereRaw('1 = 0')
        else all.where((either) => either.where(term.column, later, value as Knex.Value).orWhereNull(term.column))
      })
    })
  })
}
