import type { Knex } from 'knex'
import { badField } from '../common/errors'
import type { ResolvedField } from '../resource/resolved'
import type { SqlColumn } from '../dialect/dialect'
import type { SortField } from '../model/query'
import { keyName } from './shape-key'
import { qualified, type SqlTarget } from './sql-target'
import { relationSortKey, type RelationSorts } from './relation-sort'

export interface SortTerm {
  field: ResolvedField
  /** Qualified column, or a SQL-computed field's expression (or a related record's, or an aggregate). */
  column: SqlColumn
  direction: 'ASC' | 'DESC'
  /** Only meaningful for nullable terms. */
  nullsFirst: boolean
  /** Whether the term can be NULL: a nullable field, or a related record's field or aggregate. */
  nullable: boolean
  /** A related record's field or a relation aggregate (joined), by its shape key: keysets cannot page by it. */
  joinedKey?: string
}

/** The terms of a sort and the relations they join (see `relation-sort.ts`). */
export interface SortPlan {
  terms: SortTerm[]
  relations: RelationSorts
}

/**
 * The validated sort terms, with the id appended as the final tie-breaker so that paging is stable.
 * Without an explicit `nulls`, NULLs sort as the smallest value (what SQLite and MySQL do). Dotted fields
 * and aggregates sort by related records, which `relations` joins (see `relationSortKey`).
 */
export function sortPlan(
  knex: Knex,
  target: SqlTarget,
  sorting: SortField[] = [],
  limits: { maxRelationDepth: number; maxRelationFilters: number } = {
    maxRelationDepth: 0,
    maxRelationFilters: 0
  }
): SortPlan {
  const { resource } = target
  const relations: RelationSorts = { chains: [], joins: [], aggregates: [] }
  const entries = sorting.some((sort) => sort.field === resource.idField.name && !sort.aggregate)
    ? sorting
    : [...sorting, { field: resource.idField.name, direction: 'ASC' as const }]
  const terms = entries.map((sort, index): SortTerm => {
    const path = `sorting.${index}`
    if (sort.direction !== 'ASC' && sort.direction !== 'DESC')
      throw badField(`${path}.direction`, 'must be ASC or DESC')
    if (sort.nulls !== undefined && sort.nulls !== 'NULLS_FIRST' && sort.nulls !== 'NULLS_LAST') {
      throw badField(`${path}.nulls`, 'must be NULLS_FIRST or NULLS_LAST')
    }
    const nulls = sort.nulls ?? (sort.direction === 'ASC' ? 'NULLS_FIRST' : 'NULLS_LAST')
    const placed = { direction: sort.direction, nullsFirst: nulls === 'NULLS_FIRST' }
    if (sort.aggregate !== undefined || (typeof sort.field === 'string' && sort.field.includes('.'))) {
      return { ...relationSortKey(knex, target, sort, path, relations, limits), ...placed }
    }
    const field = resource.fieldMap.get(sort.field)
    if (!field || field.computed)
      throw badField(`${path}.field`, `${resource.name} cannot be sorted by "${sort.field}"`)
    return { field, column: qualified(target, field), nullable: field.nullable, ...placed }
  })
  return { terms, relations }
}

/**
 * ORDER BY terms as SQL, so that the same order serves ORDER BY and window functions. NULL placement is
 * explicit (`(col IS NULL)` first) because databases disagree on the default and MySQL has no NULLS FIRST.
 */
export function orderSql(terms: SortTerm[]) {
  const sql: string[] = []
  const bindings: SqlColumn[] = []
  for (const term of terms) {
    if (term.nullable) {
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
  for (const term of terms) {
    const name = term.joinedKey ?? keyName(term.field)
    key += `${name} ${term.direction} ${term.nullsFirst ? 'first' : 'last'},`
  }
  return key
}
