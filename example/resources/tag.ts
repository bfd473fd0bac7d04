import { Type, type Static } from '@sinclair/typebox'
import { defineResource, FilterableField, IDField } from 'feathers-query'
import { auditFields } from './task-fields'

/** nestjs-query's Tag: labels linked to todo items, many to many, through TodoItemTag. */
export const tagSchema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  name: FilterableField(Type.String({ minLength: 1, maxLength: 100 })),
  created: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  updated: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  ...auditFields
})

export type Tag = Static<typeof tagSchema>

export const tagResource = defineResource({
  name: 'Tag',
  schema: tagSchema,
  table: 'tags',
  multi: true,
  basePath: 'tags',
  // A tag is known by its name: POST /tags with Prefer: resolution=merge-duplicates, upsertOneTag.
  upsert: { key: ['name'] },
  query: {
    enableTotalCount: true
  },
  many: {
    todoItems: {
      resource: 'TodoItem',
      through: { resource: 'TodoItemTag', foreignKey: 'tagId', otherKey: 'todoItemId' },
      filterable: true
    }
  },
  enableAggregate: true
})
