import type { Knex } from 'knex'
import { ConfigurationError } from '../common/errors'
import type { Dialect } from './dialect'
import { mysqlDialect } from './mysql'
import { postgresDialect } from './postgres'
import { sqliteDialect } from './sqlite'

/** The supported databases, by the dialect name of their knex client. */
const dialects: Record<string, (knex: Knex) => Dialect> = {
  sqlite3: sqliteDialect,
  mysql: mysqlDialect,
  postgresql: postgresDialect
}

const cache = new WeakMap<Knex, Dialect>()

export function dialectOf(knex: Knex): Dialect {
  let dialect = cache.get(knex)
  if (!dialect) {
    const name = (knex.client as { dialect?: string }).dialect ?? ''
    const create = dialects[name]
    if (!create)
      throw new ConfigurationError(`Unsupported database client "${name}" (use SQLite, MySQL or PostgreSQL)`)
    dialect = create(knex)
    cache.set(knex, dialect)
  }
  return dialect
}
