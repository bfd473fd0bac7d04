import { Type as TypeBox025 } from '@feathersjs/typebox'
import { Type } from '@sinclair/typebox'
import { defineResource, Field, FilterableField, IDField } from '../../src'

/** A resource written with TypeBox 0.34, using every annotation and option that types a field. */
export const taskResource = defineResource({
  name: 'Task',
  basePath: 'tasks',
  schema: Type.Object({
    id: IDField(Type.Integer(), { readOnly: true }),
    title: FilterableField(Type.String({ minLength: 1 })),
    done: FilterableField(Type.Boolean(), { default: false }),
    priority: FilterableField(Type.Integer()),
    due: FilterableField(Type.String({ format: 'date-time' }), { nullable: true }),
    notes: Field(Type.String(), { nullable: true }),
    summary: Type.Optional(Field(Type.String())),
    ownerId: Field(Type.String(), { hidden: true, groupBy: true }),
    tenant: FilterableField(Type.String(), { filterOnly: true }),
    created: FilterableField(Type.String({ format: 'date-time' }), { readOnly: true }),
    loudTitle: Field(Type.String()),
    subTaskCount: FilterableField(Type.Integer())
  }),
  computed: { loudTitle: (task) => String(task.title).toUpperCase() },
  sqlComputed: {
    subTaskCount: ({ knex, column }) =>
      knex.raw('(SELECT COUNT(*) FROM ?? WHERE ?? = ?)', ['sub_tasks', 'sub_tasks.taskId', column('id')])
  },
  many: { subTasks: { resource: 'SubTask', foreignKey: 'taskId', filterable: true } },
  one: { owner: { resource: 'User', foreignKey: 'ownerId', filterable: true } },
  enableAggregate: true
})

/** A resource written as a Feathers CLI app writes schemas: @feathersjs/typebox's `Type` (TypeBox 0.25). */
export const noteResource = defineResource({
  name: 'Note',
  basePath: 'notes',
  schema: TypeBox025.Object({
    id: IDField(TypeBox025.String(), { readOnly: true }),
    body: FilterableField(TypeBox025.String()),
    rank: Field(TypeBox025.Integer(), { default: 1 }),
    secret: Field(TypeBox025.String(), { nullable: true, hidden: true })
  })
})
