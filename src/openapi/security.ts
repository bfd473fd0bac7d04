import { methodGuards, type GuardedMethod } from '../authorization/guards'
import type { ResolvedResource } from '../resource/resolved'
import { errorResponsesOf } from './components'
import type { OpenApiDocument, OperationObject, SecuritySchemeObject } from './types'

/** The name of the one scheme under `components.securitySchemes`. */
export const SECURITY_SCHEME = 'authentication'

/**
 * The scheme guarded operations are documented with, unless the application names another: what Feathers'
 * `authenticate('jwt')` reads, so that Swagger UI's Authorize sends what the guard checks.
 */
export const BEARER_JWT: SecuritySchemeObject = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'JWT',
  description:
    "An access token of the application's authentication service (in a Feathers app, the accessToken " +
    'that POST /authentication answers), sent as `Authorization: Bearer <token>`'
}

/**
 * The security of an operation that runs `method`: the scheme and the 401 where the method has guards,
 * nothing where it has none. Guards are opaque hook functions, so "has guards" is all the document can know:
 * a guard that lets anonymous callers through is still documented as needing a token.
 */
export function operationSecurity(
  resource: ResolvedResource,
  method: GuardedMethod
): Pick<OperationObject, 'security' | 'responses'> | undefined {
  if (methodGuards(resource)[method].length === 0) return undefined
  return { security: [{ [SECURITY_SCHEME]: [] }], responses: errorResponsesOf('NotAuthenticated') }
}

/** Whether any operation of `document` needs the scheme, which is then the one under `components`. */
export function usesSecurity(document: OpenApiDocument) {
  return Object.values(document.paths).some((item) =>
    Object.values(item).some((operation) => operation?.security !== undefined)
  )
}
