import { Type, type Static } from '@sinclair/typebox'
import { defineResource, Field, FilterableField } from 'feathers-query'
import { auditFields, taskFields } from './task-fields'

export const todoItemSchema = Type.Object({
  ...taskFields,
  age: Field(Type.Number({ readOnly: true, description: 'Milliseconds since the item was created' })),
  priority: FilterableField(Type.Number({ default: 0 })),
  subTasksCount: FilterableField(
    Type.Integer({ description: 'Number of sub tasks, counted by the database' })
  ),
  ...auditFields
})

export type TodoItem = Static<typeof todoItemSchema>

export const todoItemResource = defineResource({
  name: 'TodoItem',
  schema: todoItemSchema,
  table: 'todo_items',
  // Feathers' multi: many-record create, patch and remove (GraphQL's createMany..., REST arrays, ?query).
  multi: true,
  basePath: 'todo-items',
  query: {
    enableTotalCount: true,
    enableSearch: true
  },
  many: {
    subTasks: { resource: 'SubTask', foreignKey: 'todoItemId', filterable: true },
    tags: {
      resource: 'Tag',
      through: { resource: 'TodoItemTag', foreignKey: 'todoItemId', otherKey: 'tagId' },
      filterable: true
    }
  },
  enableAggregate: true,
  computed: {
    age: (item: TodoItem) => Date.now() - Date.parse(item.created)
  },
  sqlComputed: {
    // A correlated count, so it can be filtered, sorted and aggregated. SubTask has no soft delete: every
    // row counts (with one, add `AND deletedAt IS NULL`).
    subTasksCount: ({ knex, column }) =>
      knex.raw('SELECT COUNT(*) FROM ?? WHERE ?? = ?', [
        'sub_tasks as counted',
        'counted.todoItemId',
        column('id')
      ])
  }
})
