import type { Knex } from 'knex'
import type { Dialect } from '../query/dialect'

/**
 * Stands, while knex compiles a statement once, for the value each run binds in its place. A string, since
 * some dialects refuse objects as values; no caller's value is ever bound during compilation.
 */
export const SLOT = '\u0000feathers-query:bound-per-run\u0000'

/**
 * A statement whose SQL text never changes, only one bound value: knex builds and compiles it once, and
 * each run binds its value into a copy of the compiled bindings and runs the text as raw SQL. On a
 * primary-key read, building and compiling the query with knex costs about as much as SQLite takes to read
 * the row.
 */
export class CompiledStatement {
  private readonly sql: string
  private readonly bindings: readonly unknown[]
  private readonly slot: number

  constructor(
    compiled: Knex.Sql,
    private readonly dialect: Dialect
  ) {
    this.sql = compiled.sql
    this.bindings = [...compiled.bindings]
    this.slot = this.bindings.indexOf(SLOT)
    if (this.slot === -1 || this.bindings.indexOf(SLOT, this.slot + 1) !== -1) {
      throw new Error('A compiled statement binds SLOT exactly once')
    }
  }

  /** The statement with `value` bound, on `knex` (the pool or the caller's transaction). */
  query(knex: Knex, value: unknown): Knex.Raw {
    const bindings = this.bindings.slice()
    bindings[this.slot] = value
    return knex.raw(this.sql, bindings as Knex.RawBinding[])
  }

  rows(result: unknown) {
    return this.dialect.rawRows(result)
  }
}
