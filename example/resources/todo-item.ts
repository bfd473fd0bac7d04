import { Type, type Static } from '@sinclair/typebox'
import { defineResource, Field, FilterableField, IDField } from '../../src'

export const todoItemSchema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  title: FilterableField(Type.String({ minLength: 1, maxLength: 100 })),
  description: FilterableField(Type.String({ maxLength: 1000 }), { nullable: true }),
  completed: FilterableField(Type.Boolean({ default: false })),
  created: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  updated: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  age: Field(Type.Number({ readOnly: true, description: 'Milliseconds since the item was created' })),
  priority: FilterableField(Type.Number({ default: 0 })),
  // Audit columns: set by hooks from the `user-name` header, offered as aggregate groupBy keys only.
  createdBy: Field(Type.String(), { nullable: true, hidden: true, groupBy: true }),
  updatedBy: Field(Type.String(), { nullable: true, hidden: true, groupBy: true })
})

export type TodoItem = Static<typeof todoItemSchema>

export const todoItemResource = defineResource({
  name: 'TodoItem',
  schema: todoItemSchema,
  table: 'todo_items',
  basePath: 'todo-items',
  query: {
    enableTotalCount: true,
    enableSearch: true
  },
  many: {
    subTasks: { resource: 'SubTask', foreignKey: 'todoItemId' }
  },
  enableAggregate: true,
  computed: {
    age: (item: TodoItem) => Date.now() - Date.parse(item.created)
  }
})
