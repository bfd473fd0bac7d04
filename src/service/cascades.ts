import { Forbidden } from '@feathersjs/errors'
import type { Scalar } from '../model/query'
import type { ResourceParams } from '../model/records'
import type { ResourceStore } from './store'

/**
 * Before records are removed for good: the one-to-many relations whose records the database may remove with
 * them (`ON DELETE CASCADE`) must hold none the caller may not remove itself, or the remove is a 403 naming
 * the relation. A user's remove never takes another user's records without a rule saying so (the relation's
 * `onDelete: 'allow'`).
 */
export async function refuseHiddenChildren(store: ResourceStore, params: ResourceParams, ids: Scalar[]) {
  for (const relation of store.resource.many) {
    if (!relation.foreignKey || !relation.refuseHiddenOnDelete) continue
    const children = store.relatedService(relation.target.name)
    // A foreign key may be text where the id is a number (the example's SubTask.todoItemId).
    const keys = relation.foreignKey.kind === 'string' ? ids.map(String) : ids
    const { all, removable } = await children.removableReach(params, {
      [relation.foreignKey.name]: { in: keys }
    })
    if (removable >= all) continue
    throw new Forbidden(
      `${store.resource.name}: ${all - removable} ${relation.target.name} records of ${relation.name} are not ` +
        "yours to remove, and would go with it; their owners must remove them first (or the relation's " +
        "onDelete: 'allow' lets the database decide)",
      { relation: relation.name, hidden: all - removable }
    )
  }
}
