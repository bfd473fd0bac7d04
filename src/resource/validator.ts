import { Ajv, addFormats } from '@feathersjs/schema'

/** Ajv's error type, as the Ajv @feathersjs/schema brings reports it (the plugin does not install Ajv). */
type ErrorObject = NonNullable<ReturnType<Ajv['compile']>['errors']>[number]
import type { TSchema } from '@sinclair/typebox'
import { badInput, type FieldError } from '../common/errors'
import { parseIsoDate } from './iso-date'

function createAjv(coerceTypes: boolean) {
  // strict: false because TypeBox and annotations add keywords Ajv does not know (e.g. `readOnly` hints).
  const ajv = new Ajv({ coerceTypes, useDefaults: true, allErrors: true, strict: false })
  addFormats(ajv, ['date', 'email', 'uuid', 'uri'])
  // The date-times GraphQL and the filter compiler take, read by the same parser.
  const dateTime = (text: string) => !Number.isNaN(parseIsoDate(text))
  ajv.addFormat('date-time', { type: 'string', validate: dateTime })
  return ajv
}

/** Bodies are validated as sent: `"title": 5` is an error, not the string "5". */
const strictAjv = createAjv(false)
/** Query strings only carry strings, so values are converted by the declared type. */
const coercingAjv = createAjv(true)

function fieldOf(error: ErrorObject, prefix: string) {
  const path = error.instancePath.split('/').filter(Boolean)
  if (error.keyword === 'required') path.push(error.params.missingProperty)
  if (error.keyword === 'additionalProperties') path.push(error.params.additionalProperty)
  return [prefix, ...path].filter(Boolean).join('.') || prefix || '(root)'
}

function messageOf(error: ErrorObject) {
  switch (error.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
      return 'is not allowed'
    case 'type':
      return `must be ${error.params.type === 'integer' ? 'an integer' : `a ${error.params.type}`}`
    default:
      return error.message ?? 'is invalid'
  }
}

/** Ajv reports a nullable field's type mismatch twice (once per union member); keep one per field. */
function toFieldErrors(errors: ErrorObject[], prefix: string): FieldError[] {
  const seen = new Map<string, FieldError>()
  for (const error of errors) {
    if (error.keyword === 'anyOf') continue
    const field = fieldOf(error, prefix)
    if (!seen.has(field)) seen.set(field, { field, message: messageOf(error) })
  }
  return [...seen.values()]
}

/** Validates `data`; `found` are problems the caller found before, reported with (and before) Ajv's. */
export type Validate<T = Record<string, unknown>> = (data: unknown, found?: FieldError[]) => T

/**
 * Compiles a schema into a function that returns the (defaulted, possibly coerced) data or throws a 400
 * whose `errors` name every offending field. `prefix` is prepended to field paths (e.g. `body`).
 */
export function compileValidator<T = Record<string, unknown>>(
  schema: TSchema,
  options: { coerce?: boolean; prefix?: string; what?: string } = {}
): Validate<T> {
  const validate = (options.coerce ? coercingAjv : strictAjv).compile(schema)
  const prefix = options.prefix ?? ''
  return (data: unknown, found: FieldError[] = []) => {
    if (validate(data) && found.length === 0) return data as T
    const named = new Set(found.map((error) => error.field))
    const checked = toFieldErrors(validate.errors ?? [], prefix).filter((error) => !named.has(error.field))
    const errors = [...found, ...checked]
    const what = options.what ?? 'Input'
    throw badInput(errors, `${what} is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join(', ')}`)
  }
}
