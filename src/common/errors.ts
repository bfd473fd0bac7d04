import { BadRequest, FeathersError } from '@feathersjs/errors'

/** 415: the body is not JSON, so nothing in it can be trusted to mean what the client intended. */
export class UnsupportedMediaType extends FeathersError {
  constructor(message: string) {
    super(message, 'UnsupportedMediaType', 415, 'unsupported-media-type', undefined)
  }
}

/** 431: request headers past the size Node reads. */
export class RequestHeaderFieldsTooLarge extends FeathersError {
  constructor(message: string) {
    super(message, 'RequestHeaderFieldsTooLarge', 431, 'request-header-fields-too-large', undefined)
  }
}

/** 413, which @feathersjs/errors has no class for: a request body past the size the server accepts. */
export class PayloadTooLarge extends FeathersError {
  constructor(message: string) {
    super(message, 'PayloadTooLarge', 413, 'payload-too-large', undefined)
  }
}

/** A resource definition or plugin option that cannot work; thrown at start-up, never per request. */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigurationError'
  }
}

/**
 * A driver's own message, without the statement: knex puts the statement, with its values interpolated, and
 * ` - ` in front of it. MySQL's drivers keep it apart (`sqlMessage`); otherwise it is what follows the last
 * ` - `, since a value in the statement could read like a driver's message.
 */
export function driverMessage(error: { sqlMessage?: unknown; message?: unknown }) {
  if (typeof error.sqlMessage === 'string') return error.sqlMessage
  const message = typeof error.message === 'string' ? error.message : ''
  const end = message.lastIndexOf(' - ')
  return end < 0 ? message : message.slice(end + 3)
}

/**
 * The values drivers quote in their own messages: MySQL's duplicate entry and wrong value, PostgreSQL's
 * value out of range and input of the wrong syntax. Each is the written row's, so none reaches the log.
 */
const QUOTED_VALUES: [RegExp, string][] = [
  [/^Duplicate entry '.*' for key /s, "Duplicate entry '…' for key "],
  [/ value: '.*' for column /s, " value: '…' for column "],
  [/ value: '.*'$/s, " value: '…'"],
  [/^value ".*" is out of range/s, 'value "…" is out of range'],
  [/: ".*"$/s, ': "…"']
]

/** A driver's message for the log: no statement, no detail (PostgreSQL's holds the row's values), no value. */
function causeText(cause: unknown) {
  if (!(cause instanceof Error)) return String(cause)
  const { code } = cause as { code?: unknown }
  const message = QUOTED_VALUES.reduce(
    (text, [value, redacted]) => text.replace(value, redacted),
    driverMessage(cause)
  )
  return `${cause.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${message}`
}

/**
 * `error` with the failure behind it as its `cause`, for the log only: not enumerable, so neither `toJSON()`
 * nor a transport sends it to clients, and told at the end of the stack, which is what loggers print (the
 * Feathers CLI app's `logError` hook logs `error.stack`): the driver's own message, without the statement or
 * any value of the row, since clients cause these at will.
 */
export function withCause<E extends Error>(error: E, cause: unknown): E {
  Object.defineProperty(error, 'cause', {
    value: cause,
    enumerable: false,
    writable: true,
    configurable: true
  })
  error.stack = `${error.stack ?? `${error.name}: ${error.message}`}\nCaused by: ${causeText(cause)}`
  return error
}

export interface FieldError {
  /** The offending query parameter, body property, argument path or field. */
  field: string
  message: string
}

/** A 400 whose `errors` names every offending field, so that clients can point at them. */
export function badInput(errors: FieldError[], summary?: string) {
  const message = summary ?? errors.map((error) => `${error.field}: ${error.message}`).join('; ')
  return new BadRequest(message, { errors })
}

export function badField(field: string, message: string) {
  return badInput([{ field, message }])
}

/**
 * A 400 that names its fields, with each field renamed (a body's fields as a mutation's input, a record's
 * under its index, the service's names as an endpoint's parameters); any other error as it is.
 */
export function withFieldsRenamed(
  error: unknown,
  rename: (field: string) => string,
  summary?: (errors: FieldError[]) => string
): unknown {
  const errors = (error as { errors?: unknown } | undefined)?.errors
  if ((error as { code?: unknown } | undefined)?.code !== 400 || !Array.isArray(errors)) return error
  const renamed = (errors as FieldError[]).map((entry) => ({ ...entry, field: rename(entry.field) }))
  const { cause } = error as { cause?: unknown }
  const answer = badInput(renamed, summary?.(renamed))
  return cause === undefined ? answer : withCause(answer, cause)
}
