import type { Knex } from 'knex'
import { BoundedCache } from '../common/bounded-cache'
import type { Dialect } from '../dialect/dialect'
import { runQuery } from '../dialect/database-errors'
import type { ResourceRecord } from '../model/records'
import { CompiledStatement, standIns } from './compiled-statement'

/** Statement shapes kept per resource, within `limits.compiledStatementBytes`. */
const STATEMENT_SHAPES = 500

/** Runs a resource's statements, each compiled once per shape. */
export class StatementRunner {
  /** Statements compiled once per shape (reads by id, pages, counts); `null`: the shape cannot be. */
  private readonly statements: BoundedCache<CompiledStatement | null>

  /**
   * @param compiledBytes what the compiled statements may hold
   * @param preparedBytes the SQL text kept prepared per connection, or undefined when compiled reads go
   * through knex
   */
  constructor(
    private readonly dialect: Dialect,
    compiledBytes: number,
    private readonly preparedBytes: number | undefined
  ) {
    this.statements = new BoundedCache(STATEMENT_SHAPES, compiledBytes, (statement) => statement?.bytes ?? 0)
  }

  /**
   * Runs the statement `build` makes with `values` bound. Its SQL depends only on `shape`: it is compiled
   * once per shape, with stand-ins for the values (numbers for those from `integersFrom` on, which knex
   * takes as LIMIT and OFFSET), and run as raw SQL. A shape knex will not compile that way is built anew.
   */
  async run(
    knex: Knex,
    shape: string,
    values: readonly unknown[],
    build: (bound: readonly unknown[]) => Knex.QueryBuilder,
    integersFrom = values.length
  ): Promise<ResourceRecord[]> {
    const statement = this.statements.get(shape, () => {
      const compiled = build(standIns(values.length, integersFrom)).toSQL()
      return CompiledStatement.of(compiled, values.length, integersFrom, this.dialect) ?? null
    })
    if (!statement) return runQuery(build(values))
    return runQuery(statement.rows(knex, values, this.preparedBytes))
  }
}
