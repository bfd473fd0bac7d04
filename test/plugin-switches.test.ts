import assert from 'node:assert/strict'
import { exampleResourcesApp } from './support/example-resources-app'
import { forEachDatabase } from './support/server'

const COUNT = { query: '{ todoItems { totalCount } }' }

forEachDatabase(
  'Plugin switches: graphql: false leaves the endpoint out, the rest stays',
  (env) => {
    it('answers /graphql with a 404 and serves REST and /openapi.json', async () => {
      assert.equal((await env.server.http('POST', '/graphql', COUNT)).status, 404)
      assert.equal((await env.server.http('GET', '/graphql?query=%7B__typename%7D')).status, 404)
      assert.equal((await env.server.http('GET', '/todo-items')).status, 200)
      const openapi = await env.server.http('GET', '/openapi.json')
      assert.equal(openapi.status, 200)
      assert.ok(openapi.body.paths['/todo-items'], 'the REST surface is still described')
    })
  },
  exampleResourcesApp({ plugin: { graphql: false } })
)

forEachDatabase(
  'Plugin switches: openapi: false leaves the document out, the rest stays',
  (env) => {
    it('answers /openapi.json with a 404 and serves REST and GraphQL', async () => {
      assert.equal((await env.server.http('GET', '/openapi.json')).status, 404)
      assert.equal((await env.server.http('GET', '/todo-items')).status, 200)
      const graphql = await env.server.http('POST', '/graphql', COUNT)
      assert.deepEqual(graphql.body, { data: { todoItems: { totalCount: 0 } } })
    })
  },
  exampleResourcesApp({ plugin: { openapi: false } })
)
