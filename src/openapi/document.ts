import { ConfigurationError } from '../errors'
import type { ResolvedResource } from '../resource/resolve'
import { errorResponses, sharedSchemas } from './components'
import { resourcePaths, resourceSchemas } from './operations'
import type { InfoObject, OpenApiDocument, SchemaObject } from './types'

export interface OpenApiDocumentOptions {
  /** `title` and `version` of the API (default "feathers-query API", "1.0.0"). */
  info?: Partial<InfoObject>
}

/**
 * The OpenAPI 3.1 description of the REST surface of `resources`, built from the same resolved resources,
 * query-string schemas and body schemas the routes validate with. No `servers`: clients resolve paths
 * against the URL they fetched the document from.
 *
 * Not built on koa-swagger-decorator (v2), although the design card names it: its registry is one
 * module-level zod-to-openapi registry per process (two apps, or two test servers, would share one document),
 * request parameters and validation must be zod objects (a second schema language beside TypeBox), routes are
 * declared by class decorators rather than generated, its document is OpenAPI 3.0 and its Swagger UI page
 * loads from a CDN. What it would add over this small builder is only the document assembly.
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
    Object.assign(document.paths, resourcePaths(resource))
  }
  return document
}
