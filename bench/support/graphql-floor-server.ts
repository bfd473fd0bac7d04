import Koa from 'koa'
import { koaBody } from 'koa-body'
import knex, { type Knex } from 'knex'
import DataLoader from 'dataloader'
import {
  buildSchema,
  parse,
  validate,
  type DocumentNode,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo
} from 'graphql'
import { createHandler } from 'graphql-http/lib/use/koa'
import { knexConfig } from '../../example/database'
import { memoryProbe } from './memory-probe'
import { runServer } from './run-server'
import {
  aggregateByCompleted,
  aggregateByDay,
  oneTodoItem,
  subTaskEdgesOf,
  todoItemNodes,
  type ListNode
} from './raw-reads'

/**
 * The GraphQL floor of the HTTP benchmarks: what GraphQL over HTTP costs with the libraries the plugin is
 * built on and nothing else. Koa, koa-body, graphql-http's Koa handler and graphql-js, over a hand-written
 * schema of just the fields the benchmark asks for, whose resolvers run the raw handler's reads (the same
 * SQL, the same answer objects); relations batched per request with DataLoader; documents parsed and
 * validated once and answers without errors serialized without graphql-http's replacer, as the plugin does;
 * the documents the benchmark sends always give the paging and filter arguments. No Feathers, no hooks, no
 * generated schema, no graphql-jit.
 * The example's ratio to this server is what the plugin costs over these libraries; this server's ratio to
 * the raw handler is what the libraries cost.
 */
const schema = buildSchema(`
  input CursorPaging { first: Int }
  input BooleanIs { is: Boolean }
  input TodoItemFilter { completed: BooleanIs }
  type SubTask { id: ID! title: String! }
  type SubTaskEdge { node: SubTask! }
  type SubTaskConnection { edges: [SubTaskEdge!]! }
  type TodoItem {
    id: ID!
    title: String!
    completed: Boolean!
    created: String!
    priority: Float
    subTasks(paging: CursorPaging): SubTaskConnection!
  }
  type TodoItemEdge { node: TodoItem! }
  type TodoItemConnection { edges: [TodoItemEdge!]! }
  enum DateBucket { DAY }
  type GroupBy { completed: Boolean created(by: DateBucket): String }
  type Count { id: Int }
  type Avg { priority: Float }
  type Aggregate { groupBy: GroupBy! count: Count avg: Avg }
  type Query {
    todoItems(paging: CursorPaging, filter: TodoItemFilter): TodoItemConnection!
    todoItem(id: ID!): TodoItem
    todoItemAggregate: [Aggregate!]!
  }
`)

type Context = {
  db: Knex
  /** Sub tasks' edges by parent id, one loader per page size asked for. */
  subTasks: Map<number, DataLoader<number, Array<{ node: { id: string; title: string } }>>>
}

type Resolver = GraphQLFieldResolver<unknown, Context, any>

/** Whether the aggregate's `groupBy` selects `created` (the day buckets) rather than `completed`. */
const groupsByDay = (info: GraphQLResolveInfo) =>
  info.fieldNodes[0].selectionSet!.selections.some(
    (selection) =>
      selection.kind === 'Field' &&
      selection.name.value === 'groupBy' &&
      selection.selectionSet!.selections.some(
        (inner) => inner.kind === 'Field' && inner.name.value === 'created'
      )
  )

const resolvers: Record<string, Record<string, Resolver>> = {
  Query: {
    todoItems: async (_, { paging, filter }, { db }) => ({
      edges: (await todoItemNodes(db, filter?.completed?.is ?? false, paging?.first ?? 10)).map((node) => ({
        node
      }))
    }),
    todoItem: (_, { id }, { db }) => oneTodoItem(db, Number(id)),
    todoItemAggregate: (_, __, { db }, info) =>
      groupsByDay(info) ? aggregateByDay(db) : aggregateByCompleted(db)
  },
  TodoItem: {
    subTasks: async (parent, { paging }, context) => {
      const first: number = paging?.first ?? 10
      let loader = context.subTasks.get(first)
      if (!loader) {
        loader = new DataLoader(async (ids) => {
          const byParent = await subTaskEdgesOf(context.db, [...ids], first)
          return ids.map((id) => byParent.get(id) ?? [])
        })
        context.subTasks.set(first, loader)
      }
      return { edges: await loader.load(Number((parent as ListNode).id)) }
    }
  }
}

for (const [typeName, fields] of Object.entries(resolvers)) {
  const type = schema.getType(typeName) as { getFields(): Record<string, { resolve?: Resolver }> }
  for (const [fieldName, resolve] of Object.entries(fields)) type.getFields()[fieldName].resolve = resolve
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }

/** Parsed and validated documents by their text: the benchmark sends the same few documents again and again. */
const parsed = new Map<string, DocumentNode>()
const valid = new WeakSet<DocumentNode>()

async function main() {
  const db = knex(knexConfig(process.env.DATABASE_URL!))
  const graphql = createHandler<Context>({
    schema,
    parse: (source) => {
      const text = typeof source === 'string' ? source : source.body
      let document = parsed.get(text)
      if (!document) parsed.set(text, (document = parse(text)))
      return document
    },
    validate: (schema, document, rules) => {
      if (valid.has(document)) return []
      const errors = validate(schema, document, rules)
      if (!errors.length) valid.add(document)
      return errors
    },
    context: () => ({ db, subTasks: new Map() }),
    // graphql-http serializes through a replacer function (for errors), which sends V8's JSON.stringify down
    // its slow path; the plugin serializes an answer without errors plainly, and so does a server that cares.
    onOperation: (_request, _args, result) =>
      result.errors
        ? undefined
        : [JSON.stringify(result), { status: 200, statusText: 'OK', headers: JSON_TYPE }]
  })
  const app = new Koa()
  app.use(koaBody())
  app.use(async (ctx, next) => {
    const memory = memoryProbe(ctx.path)
    if (memory) ctx.body = memory
    else if (ctx.path === '/graphql') await graphql(ctx, next)
    else ctx.status = 404
  })
  return app.listen(0)
}

runServer(main)
