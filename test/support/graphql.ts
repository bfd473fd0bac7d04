import assert from 'node:assert/strict'
import { printSchema } from 'graphql'
import type { TestServer } from './server'
import { feathersQueryState } from '../../src'

export interface GraphqlResponse<T = any> {
  status: number
  data?: T
  errors?: Array<{
    message: string
    path?: Array<string | number>
    extensions: { code: string; errors?: any[] }
  }>
}

/** Posts a GraphQL operation to `/graphql` and returns status, data and errors. */
export async function graphql<T = any>(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {}
): Promise<GraphqlResponse<T>> {
  const response = await server.http('POST', '/graphql', { query, variables }, headers)
  if (typeof response.body !== 'object')
    throw new Error(`Not a GraphQL response (${response.status}): ${response.text}`)
  return { status: response.status, ...response.body }
}

/** The cursor of the record at `index` (nestjs-query's offset cursors; clients treat them as opaque). */
export const cursor = (index: number) => Buffer.from(`arrayconnection:${index}`).toString('base64')

/** The server's GraphQL schema as SDL without descriptions, all whitespace runs made one space. */
export function compactSdl(server: TestServer) {
  return printSchema(feathersQueryState(server.app)!.graphqlSchema!)
    .replace(/\s*"""[^]*?"""/g, '')
    .replace(/\s+/g, ' ')
}

/** The error codes of a response, in order. */
export const codes = (response: GraphqlResponse) =>
  (response.errors ?? []).map((error) => error.extensions.code)

/**
 * Runs an operation that must succeed (any error fails the test, printed) and answers its data with the
 * number of SQL statements the server ran meanwhile.
 */
export async function graphqlCounted<T = any>(
  server: TestServer,
  query: string,
  { variables, headers }: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {}
): Promise<{ data: T; statements: number }> {
  let response: GraphqlResponse<T> | undefined
  const statements = await server.countStatements(async () => {
    response = await graphql<T>(server, query, variables, headers)
  })
  assert.equal(response!.errors, undefined, JSON.stringify(response!.errors))
  return { data: response!.data as T, statements }
}
