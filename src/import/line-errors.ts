import { FeathersError } from '@feathersjs/errors'
import type { FieldError } from '../common/errors'
import type { ImportLineError } from './report'

/**
 * Whether a line's failure is the line's own (a 4xx: validation, a hook's refusal, `authorize`, a
 * constraint) and the import goes on, rather than the server's or the database's, which ends it.
 */
export function isLineFailure(error: unknown): error is FeathersError {
  return error instanceof FeathersError && error.code >= 400 && error.code < 500
}

/** The report's entries of a line's failure: one per field the error names (a body's, without `body.`). */
export function lineErrors(line: number, error: FeathersError | FieldError[]): ImportLineError[] {
  const fields = Array.isArray(error) ? error : (error.errors as FieldError[] | undefined)
  if (Array.isArray(fields) && fields.length > 0 && fields.every((entry) => entry?.field)) {
    return fields.map((entry) => ({
      line,
      field: entry.field.replace(/^body\./, ''),
      message: entry.message
    }))
  }
  return [{ line, field: null, message: (error as FeathersError).message }]
}
