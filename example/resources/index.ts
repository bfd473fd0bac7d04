import { todoItemResource } from './todo-item'
import { subTaskResource } from './sub-task'
import { tagResource } from './tag'
import { todoItemTagResource } from './todo-item-tag'

/** Tag and the links between tags and todo items (see TodoItem.tags). */
export const tagResources = [tagResource, todoItemTagResource]

/** Every resource of the example application. */
export const exampleResources = [todoItemResource, subTaskResource, ...tagResources]
