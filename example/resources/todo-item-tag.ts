import { Type, type Static } from '@sinclair/typebox'
import { defineResource, FilterableField, IDField } from 'feathers-query'

/**
 * The link between a TodoItem and a Tag: linking is `POST /todo-item-tags { todoItemId, tagId }`, unlinking
 * `DELETE /todo-item-tags/:id` (or, in Feathers' syntax, `DELETE /todo-item-tags?todoItemId=1&tagId=2`), and
 * both are the `created` and `removed` events of the `todo-item-tags` service. A link is made or unmade,
 * never changed. Both ids must name records the caller may read (the one-relations' reference check).
 */
export const todoItemTagSchema = Type.Object({
  id: IDField(Type.Integer({ readOnly: true })),
  todoItemId: FilterableField(Type.Integer({ minimum: 1, description: 'Id of the linked TodoItem' })),
  tagId: FilterableField(Type.Integer({ minimum: 1, description: 'Id of the linked Tag' }))
})

export type TodoItemTag = Static<typeof todoItemTagSchema>

export const todoItemTagResource = defineResource({
  name: 'TodoItemTag',
  schema: todoItemTagSchema,
  table: 'todo_item_tags',
  basePath: 'todo-item-tags',
  update: { disabled: true },
  // Unlinking by the pair: `remove(null, { query: { todoItemId, tagId } })`.
  multi: ['remove'],
  one: {
    todoItem: { resource: 'TodoItem', foreignKey: 'todoItemId', filterable: true },
    tag: { resource: 'Tag', foreignKey: 'tagId', filterable: true }
  }
})
