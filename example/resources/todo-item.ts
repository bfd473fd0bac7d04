import { Type, type Static } from '@sinclair/typebox'
import { defineResource, Field, FilterableField } from 'feathers-query'
import { auditFields, taskFields } from './task-fields'

export const todoItemSchema = Type.Object({
  ...taskFields,
  age: Field(Type.Number({ readOnly: true, description: 'Milliseconds since the item was created' })),
  priority: FilterableField(Type.Number({ default: 0 })),
  ...auditFields
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
  }
})
