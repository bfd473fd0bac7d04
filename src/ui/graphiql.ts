import { assetMiddleware, escapeHtml, packageFile, sameOriginPolicy } from './assets'

export interface GraphiqlOptions {
  /** Where the page is served (default `/graphiql`). */
  path?: string
  /** The GraphQL endpoint it queries (default `/graphql`). */
  endpoint?: string
  /** The query the editor opens with. */
  defaultQuery?: string
  title?: string
}

/**
 * GraphiQL from installed packages, without a CDN or a bundler: graphiql 4 is the last major version that ships
 * a prebuilt browser bundle (`graphiql.min.js`, UMD; version 5 is ES modules only), and it takes React and
 * ReactDOM as globals, which React 18 still ships as production UMD builds (React 19 does not).
 */
export function graphiql(options: GraphiqlOptions = {}) {
  const endpoint = options.endpoint ?? '/graphql'
  const title = escapeHtml(options.title ?? 'GraphiQL')
  const settings = JSON.stringify({ defaultQuery: options.defaultQuery })
  const init = `const url = new URL(${JSON.stringify(endpoint)}, location.href).href
const props = Object.assign({ fetcher: GraphiQL.createFetcher({ url }) }, ${settings})
ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, props))
`
  const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <link rel="icon" href="data:," /><!-- no /favicon.ico request -->
    <style>
      body { margin: 0; }
      #graphiql { height: 100vh; }
    </style>
    <link rel="stylesheet" href="graphiql.min.css" />
  </head>
  <body>
    <div id="graphiql">Loading…</div>
    <script src="react.production.min.js"></script>
    <script src="react-dom.production.min.js"></script>
    <script src="graphiql.min.js"></script>
    <script src="graphiql-init.js"></script>
  </body>
</html>
`
  return assetMiddleware(
    options.path ?? '/graphiql',
    {
      'index.html': { text: page },
      'graphiql-init.js': { text: init },
      'graphiql.min.css': { file: packageFile('graphiql', 'graphiql.min.css') },
      'graphiql.min.js': { file: packageFile('graphiql', 'graphiql.min.js') },
      'react.production.min.js': { file: packageFile('react', 'umd/react.production.min.js') },
      'react-dom.production.min.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js') }
    },
    sameOriginPolicy([endpoint])
  )
}
