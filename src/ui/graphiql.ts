import { assetMiddleware, pageFiles, pageHtml, sameOriginPolicy } from './assets'
import { graphiqlInitScript } from './graphiql-init'

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
  const file = pageFiles('GraphiQL', { graphiql: '^4', react: '^18', 'react-dom': '^18', 'graphql-ws': '^6' })
  const endpoint = options.endpoint ?? '/graphql'
  const init = graphiqlInitScript(endpoint, { defaultQuery: options.defaultQuery })
  const page = pageHtml({
    title: options.title ?? 'GraphiQL',
    style: 'body { margin: 0; } #graphiql { height: 100vh; }',
    stylesheets: ['graphiql.min.css'],
    rootId: 'graphiql',
    scripts: [
      'react.production.min.js',
      'react-dom.production.min.js',
      'graphiql.min.js',
      'graphql-ws.min.js',
      'graphiql-init.js'
    ]
  })
  return assetMiddleware(
    options.path ?? '/graphiql',
    {
      'index.html': { text: page },
      'graphiql-init.js': { text: init },
      'graphiql.min.css': { file: file('graphiql', 'graphiql.min.css') },
      'graphiql.min.js': { file: file('graphiql', 'graphiql.min.js') },
      'graphql-ws.min.js': { file: file('graphql-ws', 'umd/graphql-ws.min.js') },
      'react.production.min.js': { file: file('react', 'umd/react.production.min.js') },
      'react-dom.production.min.js': { file: file('react-dom', 'umd/react-dom.production.min.js') }
    },
    sameOriginPolicy([endpoint])
  )
}
