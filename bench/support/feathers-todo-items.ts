import type { HookContext } from '@feathersjs/feathers'
import { Ajv, addFormats, resolve, virtual } from '@feathersjs/schema'
import { Type, getValidator, querySyntax, type Static } from '@feathersjs/typebox'

/**
 * The todo items of the Feathers app baseline, in the form the Feathers CLI generates a service's schema file:
 * a TypeBox schema, data and query schemas with their validators, and resolvers. The result resolver turns
 * the columns into what the schema says (SQLite returns 1/0 and epoch milliseconds, PostgreSQL a count as a
 * string) and adds `age`, as the example does; `subTasksCount` is the example's SQL subquery
 * (`feathers-server.ts`).
 */
export const todoItemSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
    completed: Type.Boolean(),
    created: Type.String({ format: 'date-time' }),
    updated: Type.String({ format: 'date-time' }),
    age: Type.Number(),
    priority: Type.Number(),
    subTasksCount: Type.Integer()
  },
  { $id: 'TodoItem', additionalProperties: false }
)
export type TodoItem = Static<typeof todoItemSchema>

// The CLI's validators.ts: query strings are coerced (`completed=true` is a boolean).
const formats = ['date-time'] as const
const dataValidator = addFormats(new Ajv({}), [...formats])
const queryValidator = addFormats(new Ajv({ coerceTypes: true }), [...formats])

const toIso = (value: unknown) =>
  (value instanceof Date ? value : new Date(value as string | number)).toISOString()

export const todoItemResolver = resolve<TodoItem, HookContext>({
  completed: async (value) => Boolean(value),
  created: async (value) => toIso(value),
  updated: async (value) => toIso(value),
  age: virtual(async (item) => Date.now() - Date.parse(toIso(item.created))),
  subTasksCount: async (value) => Number(value)
})

/** The audit columns are not part of the public record. */
export const todoItemExternalResolver = resolve<
  TodoItem & { createdBy?: unknown; updatedBy?: unknown },
  HookContext
>({
  createdBy: async () => undefined,
  updatedBy: async () => undefined
})

export const todoItemDataSchema = Type.Pick(
  todoItemSchema,
  ['title', 'description', 'completed', 'priority'],
  {
    $id: 'TodoItemData'
  }
)
export const todoItemDataValidator = getValidator(todoItemDataSchema, dataValidator)
export const todoItemDataResolver = resolve<TodoItem, HookContext>({})

export const todoItemQueryProperties = Type.Pick(todoItemSchema, [
  'id',
  'title',
  'completed',
  'created',
  'priority'
])
export const todoItemQuerySchema = Type.Intersect(
  [querySyntax(todoItemQueryProperties), Type.Object({}, { additionalProperties: false })],
  { additionalProperties: false }
)
export const todoItemQueryValidator = getValidator(todoItemQuerySchema, queryValidator)
export const todoItemQueryResolver = resolve<Static<typeof todoItemQuerySchema>, HookContext>({})
