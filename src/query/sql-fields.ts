import type { Knex } from 'knex'
import type { ResolvedField } from '../resource/resolved'
import type { Dialect } from '../dialect/dialect'

/**
 * The SQL of SQL-computed fields. A field's expression is built once per database and table alias from the
 * resource's configuration, never from a request, so it is a fixed part of every statement's text: a
 * statement compiled once per shape (`CompiledStatement`) keeps it, and its own bindings, as they are.
 */
const built = new WeakMap<Dialect, Map<string, Knex.Raw>>()

/**
 * The expression of a SQL-computed field over `table` (the resource's table or an alias of it), in
 * parentheses so that it composes with any operator (`expr::text`, `expr IS NULL`).
 */
export function fieldExpression(dialect: Dialect, table: string, field: ResolvedField): Knex.Raw {
  let expressions = built.get(dialect)
  if (!expressions) {
    expressions = new Map()
    built.set(dialect, expressions)
  }
  // Field names are arbitrary strings; JSON keeps the two parts of the key apart.
  const key = JSON.stringify([table, field.name])
  let expression = expressions.get(key)
  if (!expression) {
    const { knex } = dialect
    const quotedTable = knex.raw('??', [table]).toQuery()
    const column = (name: string) => knex.ref(`${table}.${name}`)
    const raw = field.expression!({ knex, dialect: dialect.name, table: quotedTable, column })
    expression = knex.raw('(?)', [raw])
    expressions.set(key, expression)
  }
  return expression
}
