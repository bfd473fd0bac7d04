import type { Knex } from 'knex'
import { badField } from '../common/errors'
import { encodeValue, type DbValue } from '../resource/codec'
import type { SortTerm } from './compile-sort'
import { placeholderFor, type Dialect } from '../dialect/dialect'
import { compare } from './compile-filter'
import { copyWith } from '../common/copy-with'

/**
 * Keyset paging: a page starts after (or ends before) a position in the order, given by the values of the
 * order's terms (sort fields, then the id). Unlike an offset, finding the position costs what the first page
 * does however deep it lies, and rows inserted or deleted in front of it move no page.
 */

/** The order read backwards: what precedes a record in `terms` follows it in these, NULLs included. */
export function reversedTerms(terms: SortTerm[]): SortTerm[] {
  return terms.map((term) =>
    copyWith(term, {
      direction: term.direction === 'ASC' ? ('DESC' as const) : ('ASC' as const),
      nullsFirst: !term.nullsFirst
    })
  )
}

/** The values a record holds in the terms' fields, by field name: where it stands in the order. */
export function positionOf(terms: SortTerm[], record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(terms.map((term) => [term.field.name, record[term.field.name] ?? null]))
}

/**
 * A position (record values by field name) checked against the order and encoded for the database: exactly
 * the terms' fields, each value of its field's type, null only where the field is nullable. Anything else is
 * a 400 naming `path`: a position made for another order selects nothing wrong, it is refused.
 */
export function encodePosition(terms: SortTerm[], position: unknown, path: string): DbValue[] {
  if (!position || typeof position !== 'object' || Array.isArray(position)) {
    throw badField(path, 'must be the position of a record in the order')
  }
  const names = Object.keys(position)
  if (names.length !== terms.length || terms.some((term) => !names.includes(term.field.name))) {
    throw badField(path, `does not fit the order (${terms.map((term) => term.field.name).join(', ')})`)
  }
  return terms.map((term) => {
    const value = (position as Record<string, unknown>)[term.field.name]
    const at = `${path}.${term.field.name}`
    if (value === null || value === undefined) {
      if (!term.field.nullable) throw badField(at, 'must not be null')
      return null
    }
    return encodeValue(term.field, value, at)
  })
}

/** One bound comparison of the condition: `column op bound[first + slot]`. */
interface Compare {
  term: SortTerm
  op: '=' | '>' | '<' | '>=' | '<='
  slot: number
}

/** `column IS NULL` / `IS NOT NULL`: NULLs are placed by the order, never bound. */
interface NullTest {
  term: SortTerm
  isNull: boolean
}

/** Either `test` or `test OR column IS NULL` (a later value, or a NULL sorted last). */
type Test = Compare | NullTest

interface Clause {
  equal: Test[]
  later: Test
  orNull: boolean
}

/**
 * The rows after a position in the order of `terms`, as a WHERE condition whose SQL depends only on its
 * `key` (the order and which values are NULL) and whose values are bound: the condition of a statement
 * compiled once per shape. Each value is bound once per use, as compiled statements require.
 */
export interface KeysetCondition {
  key: string
  values: DbValue[]
  apply(builder: Knex.QueryBuilder, bound: readonly unknown[], first: number): Knex.QueryBuilder
}

/**
 * `(t1 later v1) OR (t1 = v1 AND t2 later v2) OR ...`, where "later" follows each term's direction and
 * NULL placement. The first term's bound (`t1 >= v1` ascending) is repeated outside the OR, so that an
 * index on it narrows the scan to the rows from the position on.
 */
export function keysetCondition(terms: SortTerm[], position: DbValue[], dialect: Dialect): KeysetCondition {
  const values: DbValue[] = []
  const bind = (term: SortTerm, op: Compare['op'], value: DbValue): Compare => {
    values.push(value)
    return { term, op, slot: values.length - 1 }
  }
  const clauses: Clause[] = []
  terms.forEach((term, index) => {
    const value = position[index]
    const later = term.direction === 'ASC' ? '>' : '<'
    let test: Test
    let orNull = false
    if (value === null) {
      // After a NULL sorted first come the values; after a NULL sorted last, nothing of this term.
      if (!term.nullsFirst) return
      test = { term, isNull: false }
    } else {
      test = bind(term, later, value)
      orNull = term.field.nullable && !term.nullsFirst
    }
    const equal = terms.slice(0, index).map((previous, at): Test => {
      const previousValue = position[at]
      return previousValue === null ? { term: previous, isNull: true } : bind(previous, '=', previousValue)
    })
    clauses.push({ equal, later: test, orNull })
  })
  const [head] = terms
  const narrowing =
    head && position[0] !== null && !head.field.nullable
      ? bind(head, head.direction === 'ASC' ? '>=' : '<=', position[0])
      : undefined
  const key = `${position.map((value) => (value === null ? 'n' : 'v')).join('')}`

  const test = (builder: Knex.QueryBuilder, bound: readonly unknown[], first: number, condition: Test) => {
    // Knex takes a Raw (a SQL-computed field) wherever it takes a column name, though its types say names.
    const column = condition.term.column as string
    if ('isNull' in condition) {
      return condition.isNull ? builder.whereNull(column) : builder.whereNotNull(column)
    }
    const parameter = placeholderFor(dialect, condition.term.field.kind)
    return compare(builder, column, condition.op, bound[first + condition.slot] as Knex.Value, parameter)
  }
  return {
    key,
    values,
    apply(builder, bound, first) {
      if (narrowing) test(builder, bound, first, narrowing)
      if (clauses.length === 0) return builder.whereRaw('1 = 0')
      return builder.where((any) => {
        for (const clause of clauses) {
          any.orWhere((all) => {
            for (const equal of clause.equal) test(all, bound, first, equal)
            if (!clause.orNull) return test(all, bound, first, clause.later)
            const column = clause.later.term.column as string
            all.where((either) => test(either, bound, first, clause.later).orWhereNull(column))
          })
        }
      })
    }
  }
}
