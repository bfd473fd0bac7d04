import { BadRequest, Conflict, FeathersError, GeneralError, Unavailable } from '@feathersjs/errors'
import type { ResolvedResource } from '../resource/resolved'

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  // The server ended the statement (KILL QUERY, MySQL's max_execution_time) or is shutting down.
  'ER_QUERY_INTERRUPTED',
  'ER_QUERY_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  // PostgreSQL: connection exceptions (class 08), too many connections, shutting down or starting up, and a
  // statement cancelled (pg_cancel_backend, statement_timeout).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57014',
  '57P01',
  '57P02',
  '57P03'
])

/**
 * What the pg driver throws, without a code, when its connection is gone or never came: the server closed
 * it, a connect or read timeout, a query on a connection that already failed. Knex puts the statement and
 * ` - ` in front of a failed query's message.
 */
const PG_CONNECTION_LOST =
  /(^| - )(Connection terminated|Client has encountered a connection error|Client was closed|timeout expired|Query read timeout)/

/** Concurrent transactions that could not both go through: the client may retry. */
const CONCURRENCY_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', '40001', '40P01'])

const CONFLICT_CODES = new Set([
  'ER_DUP_ENTRY',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  '23505'
])

const CONSTRAINT_CODES = new Set([
  'ER_NO_REFERENCED_ROW_2',
  'ER_ROW_IS_REFERENCED_2',
  'ER_BAD_NULL_ERROR',
  'ER_NO_DEFAULT_FOR_FIELD',
  'ER_DATA_TOO_LONG',
  'ER_WARN_DATA_OUT_OF_RANGE',
  'ER_CHECK_CONSTRAINT_VIOLATED',
  'ER_CONSTRAINT_FAILED',
  'ER_TRUNCATED_WRONG_VALUE',
  'SQLITE_CONSTRAINT_FOREIGNKEY',
  'SQLITE_CONSTRAINT_NOTNULL',
  'SQLITE_CONSTRAINT_CHECK',
  'SQLITE_TOOBIG',
  // PostgreSQL: foreign key, NOT NULL, CHECK, value too long, numeric or date out of range, text the
  // column's type cannot read or the encoding cannot hold (the codec refuses those first; this is the net).
  '23503',
  '23502',
  '23514',
  '22001',
  '22003',
  '22007',
  '22008',
  '22021',
  '22P02',
  '22P05'
])

const ANSWERED_CODES = new Set([
  ...UNAVAILABLE_CODES,
  ...CONCURRENCY_CODES,
  ...CONFLICT_CODES,
  ...CONSTRAINT_CODES
])

/** The column a driver's constraint message names, where it names one. */
function columnOf(message: string) {
  const patterns = [
    /for column '([^']+)'/, // MySQL: Data too long / Out of range value for column 'x'
    /Column '([^']+)' cannot be null/, // MySQL NOT NULL
    /Field '([^']+)' doesn't have a default value/, // MySQL NOT NULL column left out of an INSERT
    /FOREIGN KEY \(`([^`]+)`\)/, // MySQL foreign key
    /constraint failed: \w+\.(\w+)/, // SQLite NOT NULL / CHECK: table.column
    /null value in column "([^"]+)"/ // PostgreSQL NOT NULL
  ]
  for (const pattern of patterns) {
    const match = pattern.exec(message)
    if (match) return match[1]
  }
  return undefined
}

/**
 * An error of the database driver or of knex's pool: it has a code (`ER_DUP_ENTRY`, `SQLITE_BUSY`,
 * `ECONNRESET`), or from mysql2 is `fatal` (the connection is unusable; "Can't add new command when connection
 * is in closed state" has no code), or is knex's wait for a pooled connection timing out (no code either).
 */
export function isDriverError(error: unknown) {
  if (error instanceof FeathersError) return false
  const { fatal, name, sqlState } = (error ?? {}) as { fatal?: unknown; name?: unknown; sqlState?: unknown }
  return (
    codeOf(error) !== undefined ||
    typeof sqlState === 'string' ||
    fatal === true ||
    name === 'KnexTimeoutError' ||
    isLostPgConnection(error)
  )
}

/**
 * The driver's code of an error. mysql2 names errors by MySQL's numbers: MariaDB's own have no code there
 * (1969, a statement past `max_statement_time`) or another error's (4025, MariaDB's CHECK violation, is
 * MySQL's ER_INNODB_AUTOEXTEND_SIZE_OUT_OF_RANGE), so those the plugin answers are told by number and
 * SQLSTATE.
 */
function codeOf(error: unknown): string | undefined {
  const { code, errno, sqlState } = (error ?? {}) as { code?: unknown; errno?: unknown; sqlState?: unknown }
  if (typeof code === 'string' && ANSWERED_CODES.has(code)) return code
  // SQLSTATE 70100: the statement was interrupted (a deadline, KILL QUERY).
  if (sqlState === '70100') return 'ER_QUERY_INTERRUPTED'
  if (errno === 4025 && sqlState === '23000') return 'ER_CONSTRAINT_FAILED'
  return typeof code === 'string' ? code : undefined
}

function isLostPgConnection(error: unknown) {
  return error instanceof Error && !('code' in error) && PG_CONNECTION_LOST.test(error.message)
}

/**
 * Turns a driver error into a Feathers error: an unreachable or busy database, a lost connection or a
 * statement the server ended is a 503 the client may retry, a violated constraint is the client's 400/409,
 * a deadlock or (PostgreSQL) a serialization failure between concurrent writes a 409 to retry, anything else
 * is our bug (500) and keeps its message out of the response.
 */
export function databaseError(error: unknown): FeathersError {
  if (error instanceof FeathersError) return error
  const { message, fatal } = (error ?? {}) as { message?: string; fatal?: boolean }
  const code = codeOf(error)
  const name = (error as Error)?.name
  const lost = fatal === true || isLostPgConnection(error)
  if ((code && UNAVAILABLE_CODES.has(code)) || lost || name === 'KnexTimeoutError') {
    return new Unavailable('The database is unavailable, please retry')
  }
  if (code && CONFLICT_CODES.has(code)) return new Conflict('A record with the same unique value exists')
  if (code && CONCURRENCY_CODES.has(code)) {
    return new Conflict('A concurrent change got in the way; retry the request')
  }
  if (code && CONSTRAINT_CODES.has(code)) {
    // The driver's message starts with the whole statement and its values: it stays in the server.
    const column = columnOf(message ?? '')
    return new BadRequest(`The data violates a database constraint${column ? ` on ${column}` : ''}`, {
      errors: [{ field: column ? `body.${column}` : 'body', message: 'violates a database constraint' }]
    })
  }
  const general = new GeneralError('Internal database error')
  Object.defineProperty(general, 'cause', { value: error, enumerable: false })
  return general
}

/**
 * A constraint error that names the column of a field the resource never shows clients (hidden, filterOnly),
 * as one naming no column: the field's name is not theirs to learn.
 */
export function withoutUnshownColumns(error: unknown, resource: ResolvedResource): unknown {
  if (!(error instanceof BadRequest)) return error
  const [first] = (error as { errors?: Array<{ field?: string }> }).errors ?? []
  const column = first?.field?.startsWith('body.') ? first.field.slice('body.'.length) : undefined
  const unshown = column && resource.fields.some((field) => !field.serialized && field.column === column)
  if (!unshown) return error
  return new BadRequest('The data violates a database constraint', {
    errors: [{ field: 'body', message: 'violates a database constraint' }]
  })
}

export async function runQuery<T>(query: PromiseLike<T>): Promise<T> {
  try {
    return await query
  } catch (error) {
    throw databaseError(error)
  }
}
