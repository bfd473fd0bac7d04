import { Conflict, FeathersError, GeneralError, Unavailable } from '@feathersjs/errors'
import { withCause } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import { constraintError, writeConstraintError } from './constraint-errors'
import { violationOf } from './constraint-violations'

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

const ANSWERED_CODES = new Set([...UNAVAILABLE_CODES, ...CONCURRENCY_CODES])

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
 * statement the server ended is a 503 the client may retry, a violated constraint is the client's 400/409
 * naming the rule (not the column, which this knows nothing of: see `writeError` and `removeError`), a deadlock or (PostgreSQL) a serialization
 * failure between concurrent writes a 409 to retry, anything else is our bug (500) and keeps its message out
 * of the response. The driver's error is the `cause` of each, for the log.
 */
export function databaseError(error: unknown): FeathersError {
  if (error instanceof FeathersError) return error
  const { fatal } = (error ?? {}) as { fatal?: boolean }
  const code = codeOf(error)
  const name = (error as Error)?.name
  const lost = fatal === true || isLostPgConnection(error)
  if ((code && UNAVAILABLE_CODES.has(code)) || lost || name === 'KnexTimeoutError') {
    return withCause(new Unavailable('The database is unavailable, please retry'), error)
  }
  const violation = violationOf(error)
  // Not the write of a row this resource knows (a hook's own write, a deferred constraint at COMMIT): the
  // column may be no field of it, or a hidden one, so only the rule is told.
  if (violation) return constraintError({ rule: violation.rule }, error)
  if (code && CONCURRENCY_CODES.has(code)) {
    return withCause(new Conflict('A concurrent change got in the way; retry the request'), error)
  }
  return withCause(new GeneralError('Internal database error'), error)
}

/**
 * `databaseError` for an INSERT or UPDATE of `row` (encoded, by column) to `resource`'s table: a violated
 * constraint names the field it can only be about, and never a field the resource does not show clients.
 */
export function writeError(error: unknown, resource: ResolvedResource, row: Record<string, unknown>) {
  const violation = error instanceof FeathersError ? undefined : violationOf(error)
  return violation ? writeConstraintError(violation, error, resource, row) : databaseError(error)
}

/**
 * `databaseError` for a DELETE of a resource's records: any foreign key refusing it is a record still
 * referenced, on its id. SQLite says only that a foreign key failed, where MySQL and PostgreSQL say which way.
 */
export function removeError(error: unknown) {
  const violation = error instanceof FeathersError ? undefined : violationOf(error)
  return violation?.rule === 'foreignKey'
    ? constraintError({ rule: 'referenced' }, error)
    : databaseError(error)
}

export async function runQuery<T>(query: PromiseLike<T>): Promise<T> {
  try {
    return await query
  } catch (error) {
    throw databaseError(error)
  }
}
