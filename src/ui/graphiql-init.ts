/**
 * The script that starts GraphiQL in the page, run by the browser as it is (no bundler): it reads the globals
 * of the UMD bundles (`React`, `ReactDOM`, `GraphiQL`, `graphqlWs`).
 *
 * Queries and mutations go over HTTP with the Headers tab's headers, as GraphiQL's fetcher sends them.
 * Subscriptions go over graphql-ws at the same path (ws: or wss:), which carries no HTTP headers of the
 * client's: they travel once per connection as its `connectionParams`, where the server reads the
 * Authorization header. So a connection is opened per set of headers: a subscription started after the
 * headers change gets a connection of its own with them, while one still running keeps its connection (each
 * closes when its last subscription ends, `lazy`).
 */
export function graphiqlInitScript(endpoint: string, props: Record<string, unknown>) {
  return `const url = new URL(${JSON.stringify(endpoint)}, location.href).href
let current
function fetcherFor(headers) {
  const key = JSON.stringify(headers || {})
  if (!current || current.key !== key) {
    const wsClient = graphqlWs.createClient({
      url: url.replace(/^http/, 'ws'),
      lazy: true,
      connectionParams: headers || {}
    })
    current = { key, fetcher: GraphiQL.createFetcher({ url, wsClient }) }
  }
  return current.fetcher
}
const fetcher = (params, options) => fetcherFor(options && options.headers)(params, options)
const props = Object.assign({ fetcher }, ${JSON.stringify(props)})
ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, props))
`
}
