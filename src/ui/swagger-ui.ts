import { assetMiddleware, pageFiles, pageHtml, sameOriginPolicy } from './assets'

export interface SwaggerUiOptions {
  /** Where the page is served (default `/docs`). */
  path?: string
  /** The OpenAPI document it shows (default `/openapi.json`, where the plugin serves it). */
  url?: string
  title?: string
}

/**
 * Swagger UI from the installed `swagger-ui-dist` package: its prebuilt bundle and stylesheet, plus a page and
 * an init script of ours (theirs points at the petstore demo). Nothing is fetched from another host, for
 * networks without internet access: `validatorUrl: null` keeps Swagger UI from sending the document to
 * its online validator.
 */
export function swaggerUi(options: SwaggerUiOptions = {}) {
  const file = pageFiles('Swagger UI', { 'swagger-ui-dist': '^5' })
  const url = options.url ?? '/openapi.json'
  const init = `window.ui = SwaggerUIBundle(${JSON.stringify({
    url,
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null
  })})\n`
  const page = pageHtml({
    title: options.title ?? 'API documentation',
    stylesheets: ['swagger-ui.css'],
    rootId: 'swagger-ui',
    scripts: ['swagger-ui-bundle.js', 'swagger-initializer.js']
  })
  return assetMiddleware(
    options.path ?? '/docs',
    {
      'index.html': { text: page },
      'swagger-initializer.js': { text: init },
      'swagger-ui.css': { file: file('swagger-ui-dist', 'swagger-ui.css') },
      'swagger-ui-bundle.js': { file: file('swagger-ui-dist', 'swagger-ui-bundle.js') }
    },
    sameOriginPolicy([url])
  )
}
