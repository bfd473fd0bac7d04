import { BadRequest, Conflict } from '@feathersjs/errors'
import { withCause } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import type { ConstraintRule, ConstraintViolation } from './constraint-violations'

/** What each rule asks of the offending value, as a field's message. */
function ruleMessage({ rule, limit, type }: ConstraintViolation): string {
  const messages: Record<ConstraintRule, string> = {
    notNull: 'must not be null (the column is NOT NULL)',
    required: 'is required (the column is NOT NULL and has no default)',
    length: limit
      ? `must have at most ${limit} characters (the column's length)`
      : 'is longer than its column allows',
    range: `is out of range for the column's type${type ? ` (${type})` : ''}`,
    format: 'is not a value its column can hold',
    size: 'is larger than the database accepts',
    foreignKey: 'must name an existing record (foreign key)',
    referenced: 'is still referenced by records of another table (foreign key)',
    unique: 'must be unique: a record with this value exists',
    check: 'violates a CHECK constraint of the table'
  }
  return messages[rule]
}

/** Where a violation names no column: a parent's removal is refused for its id, anything else for the body. */
const UNNAMED_FIELD: Partial<Record<ConstraintRule, string>> = { referenced: 'id' }

/**
 * The client's error for a violated constraint: a unique value taken is a 409, any other rule a 400, each
 * naming the field and the rule where the driver (or `namedIn`) says them. The driver's error, whose message
 * holds the statement and its values, is the error's `cause`: in the log, never in the response.
 */
export function constraintError(violation: ConstraintViolation, cause: unknown) {
  const { column, rule } = violation
  const message = ruleMessage(violation)
  const field = column ? `body.${column}` : (UNNAMED_FIELD[rule] ?? 'body')
  const errors = [{ field, message }]
  if (rule === 'unique') {
    const summary = column
      ? `A record with the same ${column} exists`
      : 'A record with the same unique value exists'
    return withCause(new Conflict(summary, column ? { errors } : undefined), cause)
  }
  const subject = column ?? (rule === 'referenced' ? 'the record' : 'a value')
  return withCause(
    new BadRequest(`The data violates a database constraint: ${subject} ${message}`, { errors }),
    cause
  )
}

/** The one column of `row` that `matches`, if exactly one does. */
function onlyColumn(row: Record<string, unknown>, matches: (value: unknown, column: string) => boolean) {
  const columns = Object.keys(row).filter((column) => matches(row[column], column))
  return columns.length === 1 ? columns[0] : undefined
}

/**
 * The column a violation names, or else the one column of the written `row` it can only be about:
 * PostgreSQL names the limit of a text too long and the value of a number out of range but not their column,
 * MySQL a unique key by name (knex's `<table>_<column>_unique`), SQLite no column of a foreign key.
 */
function columnOf(violation: ConstraintViolation, resource: ResolvedResource, row: Record<string, unknown>) {
  const { rule, limit, value, constraint } = violation
  if (violation.column) return violation.column
  if (rule === 'length' && limit !== undefined) {
    return onlyColumn(row, (cell) => typeof cell === 'string' && Array.from(cell).length > limit)
  }
  if (rule === 'range' && value !== undefined) return onlyColumn(row, (cell) => String(cell) === value)
  if (rule === 'unique' && constraint) {
    const name = constraint.toLowerCase()
    return onlyColumn(row, (_cell, column) => `${resource.table}_${column}_unique`.toLowerCase() === name)
  }
  if (rule === 'foreignKey') {
    const keys = new Set(resource.one.map((relation) => relation.foreignKey.column))
    return onlyColumn(row, (cell, column) => keys.has(column) && cell !== null)
  }
  return undefined
}

/**
 * The error of a write of `row` (encoded, by column) to `resource`'s table that broke a constraint. A column
 * of a field the resource never shows clients (hidden, filterOnly), or of no field of it at all (a NOT NULL
 * column the schema leaves out), is not named, nor its rule: the column is not theirs to learn of.
 */
export function writeConstraintError(
  violation: ConstraintViolation,
  cause: unknown,
  resource: ResolvedResource,
  row: Record<string, unknown>
) {
  const column = columnOf(violation, resource, row)
  const field = column === undefined ? undefined : resource.fields.find((entry) => entry.column === column)
  if (column !== undefined && (!field || !field.serialized)) {
    if (violation.rule === 'unique') {
      return withCause(new Conflict('A record with the same unique value exists'), cause)
    }
    return withCause(
      new BadRequest('The data violates a database constraint', {
        errors: [{ field: 'body', message: 'violates a database constraint' }]
      }),
      cause
    )
  }
  return constraintError({ ...violation, column: field?.name ?? column }, cause)
}
