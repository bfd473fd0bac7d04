import { printSchema } from 'graphql'
import type { Knex } from 'knex'
import type { TestServer } from './server'

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
  return printSchema(server.app.get('feathersQuery').graphqlSchema)
    .replace(/\s*"""[^]*?"""/g, '')
    .replace(/\s+/g, ' ')
}

/** The error codes of a response, in order. */
export const codes = (response: GraphqlResponse) =>
  (response.errors ?? []).map((error) => error.extensions.code)

export interface SubTaskSeed {
  todoItemId: number
  title: string
  description?: string | null
  completed?: boolean
  created?: string
}

/** Inserts sub-tasks straight into the table and returns their ids in order. */
export async function seedSubTasks(db: Knex, items: SubTaskSeed[]): Promise<number[]> {
  const base = Date.parse('2026-02-01T00:00:00.000Z')
  const rows = items.map((item, index) => {
    const created = item.created ? new Date(item.created) : new Date(base + index * 1000)
    return {
      todoItemId: item.todoItemId,
      title: item.title,
      description: item.description ?? null,
      completed: item.completed ?? false,
      created,
      updated: created
    }
  })
  await db.batchInsert('sub_tasks', rows, 500)
  const ids = await db('sub_tasks').select('id').orderBy('id', 'desc').limit(items.length)
  return ids.map((row) => Number(row.id)).reverse()
}
