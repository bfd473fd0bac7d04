import type { Knex } from 'knex'
import { listNode, restRecord } from './raw-reads'

/**
 * The reads of the bare handler (`bare-server.ts`): hand-written SQL strings sent through `knex.raw`, no query
 * builder, answering what the example answers (the records shaped by raw-reads' `restRecord` and `listNode`).
 * The strings are built once; only the identifier quotes differ between databases (`todoItemId` is mixed case).
 */
type Rows = Array<Record<string, unknown>>

const QUOTE = { sqlite: '"', mysql: '`', postgres: '"' }

function dialectOf(db: Knex): keyof typeof QUOTE {
  const client = String(db.client.config.client)
  if (client.includes('sqlite')) return 'sqlite'
  return client.startsWith('pg') || client.startsWith('postgres') ? 'postgres' : 'mysql'
}

/** The rows of a raw result, whose shape is each driver's own (pg: `{ rows }`, mysql: `[rows, fields]`). */
function rowsOf(result: unknown): Rows {
  if (Array.isArray(result)) return Array.isArray(result[0]) ? (result[0] as Rows) : (result as Rows)
  return (result as { rows: Rows }).rows
}

export function bareReads(db: Knex) {
  const q = QUOTE[dialectOf(db)]
  const record =
    'SELECT id, title, description, completed, created, updated, priority, ' +
    `(SELECT COUNT(*) FROM sub_tasks counted WHERE counted.${q}todoItemId${q} = todo_items.id) ` +
    `AS ${q}subTasksCount${q} FROM todo_items`
  const sql = {
    get: `${record} WHERE id = ?`,
    page: `${record} WHERE completed = ? ORDER BY id LIMIT ?`,
    count: 'SELECT COUNT(*) AS total FROM todo_items WHERE completed = ?',
    one: 'SELECT id, title FROM todo_items WHERE id = ?',
    nodes:
      'SELECT id, title, completed, created, priority FROM todo_items WHERE completed = ? ORDER BY id LIMIT ?'
  }
  const rows = async (text: string, bindings: Knex.RawBinding[]) => rowsOf(await db.raw(text, bindings))

  return {
    /** REST's get. */
    async get(id: number) {
      const [row] = await rows(sql.get, [id])
      return row ? restRecord(row) : undefined
    },
    /** REST's list: the page (one row more, for hasNextPage) and the count, as the example runs them. */
    async list(completed: boolean, limit: number) {
      const page = await rows(sql.page, [completed, limit + 1])
      const [{ total }] = await rows(sql.count, [completed])
      return {
        pageInfo: { hasNextPage: page.length > limit, hasPreviousPage: false },
        nodes: page.slice(0, limit).map(restRecord),
        totalCount: Number(total)
      }
    },
    /** The JSON of `{ todoItem(id) { id title } }`. */
    async graphqlOne(id: number) {
      const [row] = await rows(sql.one, [id])
      return { data: { todoItem: row ? { id: String(row.id), title: row.title } : null } }
    },
    /** The JSON of `{ todoItems(paging: {first}, filter: {completed: {is}}) { edges { node { … } } } }`. */
    async graphqlList(completed: boolean, first: number) {
      const nodes = (await rows(sql.nodes, [completed, first])).map(listNode)
      return { data: { todoItems: { edges: nodes.map((node) => ({ node })) } } }
    }
  }
}
