import { Type, type Static } from '@sinclair/typebox'
import { defineResource, FilterableField } from 'feathers-query'
import { auditFields, taskFields } from './task-fields'

export const subTaskSchema = Type.Object({
  ...taskFields,
  // The spec types the reference to the parent as a String.
  todoItemId: FilterableField(Type.String({ pattern: '^[0-9]+$', description: 'Id of the parent TodoItem' })),
  ...auditFields
})

export type SubTask = Static<typeof subTaskSchema>

export const subTaskResource = defineResource({
  name: 'SubTask',
  schema: subTaskSchema,
  table: 'sub_tasks',
  multi: true,
  basePath: 'sub-tasks',
  query: {
    enableTotalCount: true
  },
  one: {
    todoItem: { resource: 'TodoItem', foreignKey: 'todoItemId', filterable: true }
  },
  enableAggregate: true
})
