import type { ItemRow, PersonRow, SubTaskRow, TagRow } from './relation-order-app'

/**
 * The rows of relation-order-app's tests and what each caller may read of them, worked out here in plain JS
 * (the oracle), never from the plugin's answers.
 */
export const PEOPLE: PersonRow[] = [
  { id: 1, name: 'Ann', joined: '2026-01-05T10:00:00.000Z', badge: 'A', mentorId: 2 },
  { id: 2, name: 'Bob', joined: '2026-02-10T10:00:00.000Z', mentorId: 3 },
  // Read by admins only: its name must not reach non-admins as a group key or a sort position.
  { id: 3, name: 'secret-Sam', joined: '2026-01-31T23:30:00.000Z', mentorId: 1 },
  { id: 4, name: 'Dan', joined: '2026-03-01T10:00:00.000Z', deletedAt: '2026-03-02T00:00:00.000Z' },
  { id: 5, name: 'Eve', joined: '2026-02-15T10:00:00.000Z', mentorId: 1 },
  // Hidden from non-admins like Sam: for them its item sorts as one without an owner.
  { id: 6, name: 'secret-Aaron', joined: '2026-01-01T00:00:00.000Z' }
]

export const ITEMS: ItemRow[] = [
  { id: 1, title: 'alpha', completed: false, priority: 3, ownerId: 1 },
  { id: 2, title: 'bravo', completed: true, priority: 1, ownerId: 2 },
  { id: 3, title: 'charlie', completed: false, priority: 2, ownerId: 3 },
  { id: 4, title: 'delta', completed: true, priority: 5, ownerId: 4 },
  { id: 5, title: 'echo', completed: false, priority: 1, ownerId: null },
  { id: 6, title: 'secret-item', completed: true, priority: 4, ownerId: 1 },
  { id: 7, title: 'foxtrot', completed: false, priority: 2, ownerId: 5 },
  { id: 8, title: 'gone', completed: false, priority: 0, ownerId: 2, deletedAt: '2026-03-02T00:00:00.000Z' },
  { id: 9, title: 'golf', completed: true, priority: 3, ownerId: 1 },
  { id: 10, title: 'hotel', completed: false, priority: 2, ownerId: 6 },
  { id: 11, title: 'india', completed: true, priority: 2, ownerId: 2 }
]

export const SUB_TASKS: SubTaskRow[] = [
  { id: 1, todoItemId: 1, title: 's1', completed: false, points: 3 },
  { id: 2, todoItemId: 1, title: 's2', completed: true, points: 5 },
  { id: 3, todoItemId: 2, title: 's3', completed: false, points: null },
  { id: 4, todoItemId: 3, title: 's4', completed: true, points: 2 },
  { id: 5, todoItemId: 4, title: 's5', completed: false, points: 1 },
  { id: 6, todoItemId: 5, title: 's6', completed: false, points: 4 },
  // Under an item non-admins may not read, and under a deleted one.
  { id: 7, todoItemId: 6, title: 's7', completed: true, points: 7 },
  { id: 8, todoItemId: 8, title: 's8', completed: false, points: 6 },
  // Hidden from non-admins: must not count towards its parent's aggregates.
  { id: 9, todoItemId: 7, title: 'secret-s9', completed: false, points: 90 },
  { id: 10, todoItemId: 9, title: 's10', completed: true, points: 2 },
  {
    id: 11,
    todoItemId: 9,
    title: 's11',
    completed: false,
    points: 50,
    deletedAt: '2026-03-02T00:00:00.000Z'
  },
  { id: 12, todoItemId: 2, title: 's12', completed: true, points: 8 },
  { id: 13, todoItemId: 10, title: 's13', completed: false, points: 1 }
]

export const TAGS: TagRow[] = [
  { id: 1, name: 'home' },
  { id: 2, name: 'work' },
  { id: 3, name: 'secret-t' },
  { id: 4, name: 'gone', deletedAt: '2026-03-02T00:00:00.000Z' }
]

/** `[todoItemId, tagId]`: hidden and deleted tags linked too, so that counting them would show. */
export const LINKS: Array<[number, number]> = [
  [1, 1],
  [1, 2],
  [2, 3],
  [2, 4],
  [3, 1],
  [5, 3],
  [5, 1],
  [7, 2],
  [9, 4],
  [9, 3],
  [9, 2]
]

/** Every table's rows, as `seedRelationOrder` takes them. */
export const ROWS = { people: PEOPLE, items: ITEMS, subTasks: SUB_TASKS, tags: TAGS, links: LINKS }

export type Role = 'admin' | 'user'

export const headersOf = (role: Role): Record<string, string> =>
  role === 'admin' ? { 'x-role': 'admin' } : {}

const readable =
  (role: Role, name: (row: any) => string) =>
  <T extends { deletedAt?: string | null }>(row: T | undefined): row is T =>
    !!row && !row.deletedAt && (role === 'admin' || !name(row).startsWith('secret'))

/** What `role` may read of each table, as each resource's authorize and soft delete say. */
export function visibleTo(role: Role) {
  const person = readable(role, (row: PersonRow) => row.name)
  const item = readable(role, (row: ItemRow) => row.title)
  const task = readable(role, (row: SubTaskRow) => row.title)
  const tag = readable(role, (row: TagRow) => row.name)
  return {
    /** How many tags linked to the item the caller may read. */
    tagCount: (id: number) =>
      LINKS.filter(([itemId, tagId]) => itemId === id && tag(TAGS.find((row) => row.id === tagId))).length,
    people: PEOPLE.filter(person),
    items: ITEMS.filter(item),
    subTasks: SUB_TASKS.filter(task),
    /** A record's related record, or undefined where there is none the caller may read. */
    personOf: (id: number | null | undefined) => {
      const found = PEOPLE.find((row) => row.id === id)
      return person(found) ? found : undefined
    },
    itemOf: (id: number) => {
      const found = ITEMS.find((row) => row.id === id)
      return item(found) ? found : undefined
    }
  }
}

/** JS's order for group keys and sort values as the plugin's default: NULLs first ascending, last descending. */
export function compareValues(
  a: unknown,
  b: unknown,
  direction: 'ASC' | 'DESC' = 'ASC',
  nullsFirst?: boolean
) {
  const first = nullsFirst ?? direction === 'ASC'
  if (a === b) return 0
  if (a === null || a === undefined) return first ? -1 : 1
  if (b === null || b === undefined) return first ? 1 : -1
  const order = (a as number | string) < (b as number | string) ? -1 : 1
  return direction === 'ASC' ? order : -order
}
