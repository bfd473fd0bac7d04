/** The parts of an OpenAPI 3.1 document that feathers-query writes. */

/** A JSON Schema (2020-12), which OpenAPI 3.1 takes as its Schema Object. */
export type SchemaObject = Record<string, unknown>

export interface Reference {
  $ref: string
}

export interface MediaTypeObject {
  schema: SchemaObject | Reference
}

export interface ParameterObject {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  description?: string
  schema: SchemaObject
}

export interface HeaderObject {
  description?: string
  schema: SchemaObject
}

export interface ResponseObject {
  description: string
  headers?: Record<string, HeaderObject>
  content?: Record<string, MediaTypeObject>
}

export interface RequestBodyObject {
  required: boolean
  content: Record<string, MediaTypeObject>
}

export interface OperationObject {
  operationId: string
  tags: string[]
  summary: string
  description?: string
  parameters?: ParameterObject[]
  requestBody?: RequestBodyObject
  responses: Record<string, ResponseObject | Reference>
  security?: SecurityRequirementObject[]
}

/** How a client authenticates, e.g. `{ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }`. */
export interface SecuritySchemeObject {
  type: 'http' | 'apiKey' | 'oauth2' | 'openIdConnect' | 'mutualTLS'
  description?: string
  /** `http`: the Authorization scheme, e.g. `bearer`. */
  scheme?: string
  bearerFormat?: string
  /** `apiKey`: the header, query parameter or cookie that carries the key. */
  name?: string
  in?: 'header' | 'query' | 'cookie'
  [keyword: string]: unknown
}

/** The schemes an operation accepts, each by its name under `components.securitySchemes`. */
export type SecurityRequirementObject = Record<string, string[]>

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'

export type PathItemObject = Partial<Record<HttpMethod, OperationObject>>

export interface InfoObject {
  title: string
  version: string
  description?: string
}

export interface TagObject {
  name: string
  description?: string
}

export interface OpenApiDocument {
  openapi: '3.1.0'
  info: InfoObject
  tags: TagObject[]
  paths: Record<string, PathItemObject>
  components: {
    schemas: Record<string, SchemaObject>
    responses: Record<string, ResponseObject>
    securitySchemes?: Record<string, SecuritySchemeObject>
  }
}
