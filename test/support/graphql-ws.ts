import { createClient, type Client } from 'graphql-ws'
import WebSocket from 'ws'
import type { TestServer } from './server'

/** The GraphQL endpoint of `server` over WebSocket. */
export const wsUrl = (server: TestServer) => server.baseUrl.replace(/^http/, 'ws') + '/graphql'

/** A graphql-ws client of `server`, signed in with `token` when given; it connects at its first operation. */
export function graphqlWsClient(server: TestServer, token?: string): Client {
  return createClient({
    url: wsUrl(server),
    webSocketImpl: WebSocket,
    connectionParams: token ? { accessToken: token } : {},
    retryAttempts: 0,
    lazy: true
  })
}
