import { driverMessage } from '../common/errors'

/** The rule of the table a write broke. */
export type ConstraintRule =
  | 'notNull'
  | 'required'
  | 'length'
  | 'range'
  | 'format'
  | 'size'
  | 'foreignKey'
  | 'referenced'
  | 'unique'
  | 'check'

/**
 * A constraint violation as far as the driver tells it: the rule, and where the driver says them, the
 * column, the column type's limit (`varchar(10)`: 10), the type and the refused value (PostgreSQL names
 * the type and value of a number out of range, not the column), the constraint's name.
 */
export interface ConstraintViolation {
  rule: ConstraintRule
  column?: string
  limit?: number
  type?: string
  value?: string
  constraint?: string
}

interface DriverError {
  code?: unknown
  errno?: unknown
  sqlState?: unknown
  sqlMessage?: unknown
  message?: unknown
  column?: unknown
  constraint?: unknown
  detail?: unknown
}

const MYSQL_RULES: Record<string, ConstraintRule> = {
  ER_BAD_NULL_ERROR: 'notNull',
  ER_NO_DEFAULT_FOR_FIELD: 'required',
  ER_DATA_TOO_LONG: 'length',
  ER_WARN_DATA_OUT_OF_RANGE: 'range',
  // A double computed past the largest one, as a variance of ±1e300 (PostgreSQL's 22003 alike).
  ER_DATA_OUT_OF_RANGE: 'range',
  ER_TRUNCATED_WRONG_VALUE: 'format',
  ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: 'format',
  ER_NO_REFERENCED_ROW_2: 'foreignKey',
  ER_ROW_IS_REFERENCED_2: 'referenced',
  ER_DUP_ENTRY: 'unique',
  ER_CHECK_CONSTRAINT_VIOLATED: 'check',
  ER_CONSTRAINT_FAILED: 'check'
}

const POSTGRES_RULES: Record<string, ConstraintRule> = {
  '23502': 'notNull',
  '22001': 'length',
  '22003': 'range',
  '22007': 'format',
  '22008': 'range',
  '22021': 'format',
  '22P02': 'format',
  '22P05': 'format',
  '23503': 'foreignKey',
  '23505': 'unique',
  '23514': 'check'
}

const SQLITE_RULES: Record<string, ConstraintRule> = {
  'NOT NULL': 'notNull',
  UNIQUE: 'unique',
  'PRIMARY KEY': 'unique',
  CHECK: 'check',
  'FOREIGN KEY': 'foreignKey'
}

/** MariaDB's CHECK violation has MySQL's number of another error (see `codeOf` in database-errors). */
function mysqlViolation(error: DriverError): ConstraintViolation | undefined {
  const code =
    error.errno === 4025 && error.sqlState === '23000' ? 'ER_CONSTRAINT_FAILED' : String(error.code)
  const rule = MYSQL_RULES[code]
  if (!rule) return undefined
  const message = driverMessage(error)
  const column =
    /for column (?:`[^`]*`\.`[^`]*`\.)?[`']([^`']+)[`'] at row \d+$/.exec(message)?.[1] ??
    /^Column '([^']+)' cannot be null/.exec(message)?.[1] ??
    /^Field '([^']+)' doesn't have a default value/.exec(message)?.[1] ??
    /FOREIGN KEY \(`([^`]+)`\) REFERENCES/.exec(message)?.[1]
  const constraint =
    /for key '(?:[^']*\.)?([^'.]+)'$/.exec(message)?.[1] ?? /^CONSTRAINT `([^`]+)` failed/.exec(message)?.[1]
  return { rule, column, constraint }
}

function postgresViolation(error: DriverError): ConstraintViolation | undefined {
  const rule = POSTGRES_RULES[String(error.code)]
  if (!rule) return undefined
  const message = driverMessage(error)
  const detail = typeof error.detail === 'string' ? error.detail : ''
  // Unique and foreign key violations name their column in the detail: `Key (code)=(u) already exists.`
  const keyColumn = /^Key \(([^)]+)\)=/.exec(detail)?.[1]
  const column = typeof error.column === 'string' ? error.column : keyColumn
  const typed = /for type ([\w ]+?)(?:\((\d+)\))?$/.exec(message)
  return {
    rule: rule === 'foreignKey' && /is still referenced/.test(detail) ? 'referenced' : rule,
    column: column?.includes(',') ? undefined : column,
    type: typed?.[1],
    limit: typed?.[2] ? Number(typed[2]) : undefined,
    value: /^value "([^"]*)" is out of range/.exec(message)?.[1],
    constraint: typeof error.constraint === 'string' ? error.constraint : undefined
  }
}

/** better-sqlite3 has a code per constraint (`SQLITE_CONSTRAINT_UNIQUE`); sqlite3 only `SQLITE_CONSTRAINT`. */
function sqliteViolation(error: DriverError): ConstraintViolation | undefined {
  if (error.code === 'SQLITE_TOOBIG') return { rule: 'size' }
  if (typeof error.code !== 'string' || !error.code.startsWith('SQLITE_CONSTRAINT')) return undefined
  const message = driverMessage(error).replace(/^SQLITE_CONSTRAINT: /, '')
  const match = /^(NOT NULL|UNIQUE|PRIMARY KEY|CHECK|FOREIGN KEY) constraint failed(?:: (.+))?$/.exec(message)
  if (!match) return undefined
  const rule = SQLITE_RULES[match[1]]
  const named = match[2]
  if (rule === 'check') return { rule, constraint: named }
  // `table.column`; a unique index over several columns names them all, which is no one field.
  const column = named && !named.includes(',') ? named.slice(named.indexOf('.') + 1) : undefined
  return { rule, column }
}

function anyViolation(driver: DriverError) {
  if (typeof driver.code === 'string' && driver.code.startsWith('SQLITE_')) return sqliteViolation(driver)
  if (typeof driver.sqlMessage === 'string') return mysqlViolation(driver)
  if (typeof driver.code === 'string' && /^[0-9A-Z]{5}$/.test(driver.code)) return postgresViolation(driver)
  return undefined
}

/**
 * The constraint a driver error reports as broken, from any of the five drivers; undefined for other errors.
 * A record still referenced names the other table's column, which is not the client's to change.
 */
export function violationOf(error: unknown): ConstraintViolation | undefined {
  if (!error || typeof error !== 'object') return undefined
  const violation = anyViolation(error as DriverError)
  return violation?.rule === 'referenced' ? { rule: 'referenced' } : violation
}
