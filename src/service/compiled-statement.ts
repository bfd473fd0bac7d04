import type { Knex } from 'knex'
import type { Dialect } from '../dialect/dialect'
import { allPrepared, preparesStatements } from '../dialect/prepared-statements'
import { runCompiledQuery } from '../dialect/client-query'

const MARKER = '\u0000feathers-query:slot:'
const MARKER_END = '\u0000'
/** Knex takes LIMIT and OFFSET as integers only, so theirs stand in as numbers no request uses. */
const INTEGER_MARKER = 1_987_654_000
/** A statement binds at most LIMIT and OFFSET as integers; the range leaves room. */
const INTEGER_MARKERS = 100

/**
 * What knex binds, while it compiles a statement once, in place of each run's values: value i is the string
 * `MARKER i`, since some dialects refuse objects as values; the values from `integersFrom` on (LIMIT,
 * OFFSET) are numbers counted from INTEGER_MARKER. No caller's value is ever bound during compilation.
 */
export function standIns(count: number, integersFrom = count): unknown[] {
  if (count - integersFrom > INTEGER_MARKERS) throw new Error(`At most ${INTEGER_MARKERS} integer values`)
  const bound: unknown[] = []
  for (let index = 0; index < count; index++) {
    bound.push(
      index < integersFrom ? `${MARKER}${index}${MARKER_END}` : INTEGER_MARKER + index - integersFrom
    )
  }
  return bound
}

/** The value index a compiled binding stands in for, or -1 for a binding of the statement's own. */
function valueIndexOf(binding: unknown, integersFrom: number): number {
  if (typeof binding === 'string' && binding.startsWith(MARKER) && binding.endsWith(MARKER_END)) {
    return Number(binding.slice(MARKER.length, -MARKER_END.length))
  }
  if (
    typeof binding === 'number' &&
    binding >= INTEGER_MARKER &&
    binding < INTEGER_MARKER + INTEGER_MARKERS
  ) {
    return integersFrom + binding - INTEGER_MARKER
  }
  return -1
}

/**
 * A statement whose SQL text is fixed and whose values change: knex builds and compiles it once, with
 * stand-ins for the values, and each run binds its values into a copy of the compiled bindings and
 * runs the text as raw SQL. Building and compiling a query with knex costs about as much as SQLite takes to
 * read a page of rows, and a statement's shape (its columns, filter operators, order) repeats far more often
 * than its values do.
 */
export class CompiledStatement {
  private readonly sql: string
  private readonly bindings: readonly unknown[]
  /** Pairs of (position in the bindings, value index). */
  private readonly slots: readonly number[]
  /** The driver's options the query builder carried (`.options()`), such as MySQL's `typeCast` of date buckets. */
  private readonly options: Readonly<Record<string, unknown>> | undefined

  private constructor(
    compiled: Knex.Sql,
    slots: number[],
    private readonly dialect: Dialect
  ) {
    this.sql = compiled.sql
    this.options = Object.keys(compiled.options ?? {}).length ? compiled.options : undefined
    // The stand-ins are replaced on every run; kept, they would hold a string per value.
    const bindings = compiled.bindings.slice()
    for (let at = 0; at < slots.length; at += 2) bindings[slots[at]] = null
    this.bindings = bindings
    this.slots = slots
  }

  /** About the memory it holds: the SQL text, and a word per binding and per slot entry. */
  get bytes() {
    return this.sql.length + 8 * (this.bindings.length + this.slots.length)
  }

  /**
   * The statement knex compiled from `standIns(values, integersFrom)`, or `undefined` when its bindings do
   * not hold each stand-in exactly once (knex dropped or repeated one): such a statement must be built anew
   * with each call's values.
   */
  static of(compiled: Knex.Sql, values: number, integersFrom: number, dialect: Dialect) {
    const seen = new Array<number>(values).fill(0)
    const slots: number[] = []
    compiled.bindings.forEach((binding, position) => {
      const index = valueIndexOf(binding, integersFrom)
      if (index === -1) return
      if (index < values) seen[index]++
      slots.push(position, index)
    })
    if (slots.length !== values * 2 || seen.some((count) => count !== 1)) return undefined
    return new CompiledStatement(compiled, slots, dialect)
  }

  /**
   * The statement's rows with `values` bound, on `knex` (the pool or the caller's transaction); with
   * `preparedBytes`, on better-sqlite3, on a statement the connection prepared before (keeping that much
   * SQL text).
   */
  async rows(knex: Knex, values: readonly unknown[], preparedBytes: number | undefined) {
    const bindings = this.bindings.slice()
    const slots = this.slots
    for (let at = 0; at < slots.length; at += 2) bindings[slots[at]] = values[slots[at + 1]]
    if (preparedBytes !== undefined && preparesStatements(knex)) {
      return allPrepared(knex, this.sql, bindings, preparedBytes)
    }
    return this.dialect.rawRows(await runCompiledQuery(knex, this.sql, bindings, this.options))
  }
}
