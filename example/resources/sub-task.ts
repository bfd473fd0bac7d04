import { Type, type Static } from '@sinclair/typebox'
import { defineResource, Field, FilterableField, IDField } from '../../src'

export const subTaskSchema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  title: FilterableField(Type.String({ minLength: 1, maxLength: 100 })),
  description: FilterableField(Type.String({ maxLength: 1000 }), { nullable: true }),
  completed: FilterableField(Type.Boolean({ default: false })),
  created: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  updated: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  // The spec types the reference to the parent as a String.
  todoItemId: FilterableField(Type.String({ pattern: '^[0-9]+$', description: 'Id of the parent TodoItem' })),
  createdBy: Field(Type.String(), { nullable: true, hidden: true, groupBy: true }),
  updatedBy: Field(Type.String(), { nullable: true, hidden: true, groupBy: true })
})

export type SubTask = Static<typeof subTaskSchema>

export const subTaskResource = defineResource({
  name: 'SubTask',
  schema: subTaskSchema,
  table: 'sub_tasks',
  basePath: 'sub-tasks',
  query: {
    enableTotalCount: true
  },
  one: {
    todoItem: { resource: 'TodoItem', foreignKey: 'todoItemId' }
  },
  enableAggregate: true
})
