import { ConfigurationError } from '../common/errors'
import type { ResolvedResource } from '../resource/resolved'
import { errorResponses, sharedSchemas } from './components'
import { resourcePaths, resourceSchemas } from './operations'
import { BEARER_JWT, SECURITY_SCHEME, usesSecurity } from './security'
import type { InfoObject, OpenApiDocument, SchemaObject, SecuritySchemeObject } from './types'

export interface OpenApiDocumentOptions {
  /** `title` and `version` of the API (default "feathers-query API", "1.0.0"). */
  info?: Partial<InfoObject>
  /**
   * How a client authenticates for the operations whose service method has guards (default: a bearer JWT,
   * as Feathers' `authenticate('jwt')` reads it). `false` documents no security at all, for guards that
   * check something else than a request's credentials.
   */
  securityScheme?: SecuritySchemeObject | false
}

/**
 * The OpenAPI 3.1 description of the REST surface of `resources`, built from the same resolved resources,
 * query-string schemas and body schemas the routes validate with. No `servers`: clients resolve paths
 * against the URL they fetched the document from.
 * Not built on koa-swagger-decorator, although the design card names it (the README's decisions say why).
 */
export function openApiDocument(
  resources: ResolvedResource[],
  options: OpenApiDocumentOptions = {}
): OpenApiDocument {
  const schemas: Record<string, SchemaObject> = { ...sharedSchemas }
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'feathers-query API', version: '1.0.0', ...options.info },
    tags: [],
    paths: {},
    components: { schemas, responses: errorResponses }
  }
  for (const resource of resources) {
    for (const [name, schema] of Object.entries(resourceSchemas(resource))) {
      if (schemas[name]) throw new ConfigurationError(`OpenAPI: two schemas would be named ${name}`)
      schemas[name] = schema
    }
    document.tags.push({
      name: resource.name,
      description: `${resource.name} records at /${resource.basePath}`
    })
    Object.assign(document.paths, resourcePaths(resource, { security: options.securityScheme !== false }))
  }
  if (options.securityScheme !== false && usesSecurity(document)) {
    document.components.securitySchemes = { [SECURITY_SCHEME]: options.securityScheme ?? BEARER_JWT }
  }
  return document
}
