import { Type } from '@sinclair/typebox'
import { toOpenApiSchema } from './schema'
import type { Reference, ResponseObject, SchemaObject } from './types'

/** Names under `components`, shared by every resource; resource components are named after the resource. */
export const ERROR_SCHEMA = 'FeathersError'
export const PAGE_INFO_SCHEMA = 'OffsetPageInfo'

export const schemaRef = (name: string): Reference => ({ $ref: `#/components/schemas/${name}` })
export const responseRef = (name: string): Reference => ({ $ref: `#/components/responses/${name}` })

/** Feathers' error JSON, as `errorHandler()` writes it for every failure. */
const feathersErrorSchema = Type.Object(
  {
    name: Type.String({ description: 'Error class, e.g. BadRequest' }),
    message: Type.String(),
    code: Type.Integer({ description: 'The HTTP status' }),
    className: Type.String({ description: 'e.g. bad-request' }),
    data: Type.Optional(Type.Unknown()),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({
            description: 'The offending query parameter, path parameter or body property'
          }),
          message: Type.String()
        }),
        { description: 'One entry per offending field (400 only)' }
      )
    )
  },
  { description: 'Feathers error JSON' }
)

const offsetPageInfoSchema = Type.Object(
  {
    hasNextPage: Type.Boolean(),
    hasPreviousPage: Type.Boolean({ description: 'offset > 0' })
  },
  { additionalProperties: false }
)

export const sharedSchemas: Record<string, SchemaObject> = {
  [ERROR_SCHEMA]: toOpenApiSchema(feathersErrorSchema),
  [PAGE_INFO_SCHEMA]: toOpenApiSchema(offsetPageInfoSchema)
}

const errorResponse = (description: string): ResponseObject => ({
  description,
  content: { 'application/json': { schema: schemaRef(ERROR_SCHEMA) } }
})

/** The error statuses operations refer to, by the Feathers error name. */
export const errorResponses = {
  BadRequest: errorResponse('Invalid input; `errors` names each offending field'),
  NotAuthenticated: errorResponse('No access token, or one the application refuses (expired, invalid)'),
  NotFound: errorResponse('No such record, or not one the caller may see'),
  MethodNotAllowed: errorResponse('The endpoint is disabled, or the path has no such method'),
  NotAcceptable: errorResponse('The Accept header names no media type the endpoint answers with'),
  UnsupportedMediaType: errorResponse('The body was not sent in a media type the endpoint reads'),
  Conflict: errorResponse(
    'A unique value is taken; upserting, also: the record holding the key is one the caller may not change; ' +
      'importing: another request with the Idempotency-Key took the import over'
  ),
  PayloadTooLarge: errorResponse("The body holds more bytes or records than the import's limits"),
  Unprocessable: errorResponse('The Idempotency-Key was used for another import'),
  PreconditionFailed: errorResponse(
    'If-Match names no version the record has now: it changed since it was read (or has no versions)'
  ),
  PreconditionRequired: errorResponse(
    "The resource changes records by version: send If-Match with the record's ETag"
  )
}

export type ErrorResponseName = keyof typeof errorResponses

const ERROR_STATUS: Record<ErrorResponseName, string> = {
  BadRequest: '400',
  NotAuthenticated: '401',
  NotFound: '404',
  MethodNotAllowed: '405',
  NotAcceptable: '406',
  UnsupportedMediaType: '415',
  Conflict: '409',
  PayloadTooLarge: '413',
  Unprocessable: '422',
  PreconditionFailed: '412',
  PreconditionRequired: '428'
}

/** An operation's error responses, each a reference to the shared response of its status. */
export function errorResponsesOf(...names: ErrorResponseName[]) {
  return Object.fromEntries(names.map((name) => [ERROR_STATUS[name], responseRef(name)]))
}
