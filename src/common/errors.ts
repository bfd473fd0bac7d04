import { BadRequest, FeathersError } from '@feathersjs/errors'

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
