import { Type } from '@sinclair/typebox'
import { Field, FilterableField, IDField } from 'feathers-query'

/** What TodoItem and SubTask have in common, in the order both serialize it. */
export const taskFields = {
  id: IDField(Type.Integer({ readOnly: true })),
  title: FilterableField(Type.String({ minLength: 1, maxLength: 100 })),
  description: FilterableField(Type.String({ maxLength: 1000 }), { nullable: true }),
  completed: FilterableField(Type.Boolean({ default: false })),
  created: FilterableField(Type.String({ format: 'date-time', readOnly: true })),
  updated: FilterableField(Type.String({ format: 'date-time', readOnly: true }))
}

/** Audit columns: set by hooks from the `user-name` header, offered as aggregate groupBy keys only. */
export const auditFields = {
  createdBy: Field(Type.String(), { nullable: true, hidden: true, groupBy: true }),
  updatedBy: Field(Type.String(), { nullable: true, hidden: true, groupBy: true })
}
