/**
 * A server application's typed resource services (type-checked by test/typed-services.test.ts, never run):
 * what compiles, and on each `@ts-expect-error` line what must stay a type error.
 */
import { feathers } from '@feathersjs/feathers'
import { koa } from '@feathersjs/koa'
import type { Knex } from 'knex'
import { feathersQuery, type ResourceService } from '../../src'
import type { Application } from './declarations'
import { noteResource, taskResource } from './resources'

// As a CLI service file adds its service (src/services/tasks/tasks.ts).
declare module './declarations' {
  interface ServiceTypes {
    tasks: ResourceService<typeof taskResource>
    notes: ResourceService<typeof noteResource>
  }
}

export function createApp(Model: Knex): Application {
  const app: Application = koa(feathers())
  app.configure(feathersQuery({ Model, resources: [taskResource, noteResource] }))
  return app
}

export async function typedReads(app: Application) {
  const title: string = (await app.service('tasks').get(1)).title
  const task = await app.service('tasks').get(1, { query: { $select: ['title', 'due'] } })
  const due: string | null = task.due
  const summary: string | null | undefined = task.summary
  const loud: string = task.loudTitle
  const count: number = task.subTaskCount
  // @ts-expect-error: hidden fields are never read
  void task.ownerId
  // @ts-expect-error: filterOnly fields are never read
  void task.tenant
  // @ts-expect-error: title is a string
  const wrong: number = task.title

  const page = await app.service('tasks').find({
    query: { done: false, $sort: { title: 1 }, priority: { $gte: 2 } }
  })
  const titles: string[] = page.data.map((found) => found.title)
  const total: number = page.total
  const all = await app.service('tasks').find({ query: { $limit: 10 }, paginate: false })
  const first: number | undefined = all[0]?.id
  await app.service('tasks').find({
    query: {
      $or: [{ title: { $like: 'a%' } }, { due: null }, { id: { $in: [1, 2] } }],
      tenant: 'acme',
      subTaskCount: { $gt: 0 },
      subTasks: { done: false },
      subTasksNone: { done: false },
      subTasksEvery: { done: true },
      owner: { name: 'ann' },
      $select: ['title', 'due'],
      $skip: 20
    }
  })
  // @ts-expect-error: tasks have no field "titel"
  await app.service('tasks').find({ query: { titel: 'x' } })
  // @ts-expect-error: notes is a plain Field, which the server does not filter by
  await app.service('tasks').find({ query: { notes: 'x' } })
  // @ts-expect-error: nor sort by
  await app.service('tasks').find({ query: { $sort: { notes: 1 } } })
  // @ts-expect-error: none and every are of to-many relations
  await app.service('tasks').find({ query: { ownerNone: { name: 'ann' } } })
  // @ts-expect-error: LIKE applies to text fields
  await app.service('tasks').find({ query: { priority: { $like: '1%' } } })
  // @ts-expect-error: a hidden field cannot be selected
  await app.service('tasks').find({ query: { $select: ['ownerId'] } })
  // @ts-expect-error: $limit is find's
  await app.service('tasks').get(1, { query: { $limit: 1 } })

  const note = await app.service('notes').get('n1')
  const body: string = note.body
  const rank: number = note.rank
  // @ts-expect-error: hidden (0.25 schema)
  void note.secret

  return [title, due, summary, loud, count, wrong, titles, total, first, body, rank]
}

export async function typedWrites(app: Application) {
  const tasks = app.service('tasks')
  // done has a default: a create may leave it out.
  const created = await tasks.create({ title: 'Write', priority: 1, tenant: 'acme' })
  const id: number = created.id
  await tasks.create({
    title: 'Full',
    done: true,
    priority: 2,
    tenant: 'a',
    due: null,
    notes: 'n',
    summary: null
  })
  const many = await tasks.create([{ title: 'A', done: false, priority: 1, tenant: 'a' }])
  const firstId: number | undefined = many[0]?.id
  // @ts-expect-error: tasks have no field "titel"
  await tasks.create({ titel: 'typo', done: false, priority: 1, tenant: 'a' })
  // @ts-expect-error: priority is a number
  await tasks.create({ title: 'x', done: false, priority: 'high', tenant: 'a' })
  // @ts-expect-error: the id is read-only
  await tasks.create({ id: 7, title: 'x', done: false, priority: 1, tenant: 'a' })
  // @ts-expect-error: created is read-only
  await tasks.create({ title: 'x', done: false, priority: 1, tenant: 'a', created: '2026-01-01T00:00:00Z' })
  // @ts-expect-error: loudTitle is computed
  await tasks.create({ title: 'x', done: false, priority: 1, tenant: 'a', loudTitle: 'X' })
  // @ts-expect-error: subTaskCount is computed in SQL
  await tasks.create({ title: 'x', done: false, priority: 1, tenant: 'a', subTaskCount: 1 })
  // @ts-expect-error: ownerId is hidden: hooks set it, clients do not
  await tasks.create({ title: 'x', done: false, priority: 1, tenant: 'a', ownerId: 'u1' })
  // @ts-expect-error: title is required
  await tasks.create({ done: false, priority: 1, tenant: 'a' })
  // @ts-expect-error: done may be left out, but not null
  await tasks.create({ title: 'x', done: null, priority: 1, tenant: 'a' })

  const patched = await tasks.patch(id, { done: true }, { query: { $select: ['done'] } })
  const done: boolean = patched.done
  const patchedAll = await tasks.patch(null, { done: true }, { query: { priority: { $lt: 2 } } })
  const count: number = patchedAll.length
  // @ts-expect-error: done is a boolean
  await tasks.patch(id, { done: 'yes' })
  const updated = await tasks.update(id, { title: 'Renamed' })
  const removed = await tasks.remove(id)
  const removedAll = await tasks.remove(null, { query: { done: true } })

  // @ts-expect-error: rank is a number (0.25 schema)
  await app.service('notes').create({ body: 'b', rank: '1' })
  await app.service('notes').create({ body: 'rank has a default' })
  // @ts-expect-error: the id is read-only (0.25 schema)
  await app.service('notes').create({ id: 'n1', body: 'b', rank: 1 })

  return [firstId, done, count, updated.title, removed.id, removedAll.length]
}

export async function typedAggregates(app: Application) {
  const tasks = app.service('tasks')
  const groups = await tasks.aggregate(
    {
      groupBy: [{ field: 'done' }, { field: 'ownerId' }, { field: 'due', by: 'MONTH' }],
      count: ['id', 'tenant'],
      sum: ['priority', 'subTaskCount'],
      max: ['title'],
      sorting: [{ field: 'priority', aggregate: 'sum', direction: 'DESC' }]
    },
    { query: { done: false } }
  )
  const counted: number | undefined = groups[0]?.count?.id
  const page = await tasks.aggregate({ count: ['id'], paging: { limit: 10 } })
  const more: boolean = page.hasNextPage
  // @ts-expect-error: sum applies to numeric fields
  await tasks.aggregate({ sum: ['title'] })
  const series = await tasks.aggregate({
    groupBy: [{ field: 'due', by: 'DAY' }],
    running: { count: ['id'], sum: ['priority'] },
    previous: { count: ['id'] },
    periodAgo: { period: 'WEEK', max: ['title'] }
  })
  const runningCount: number | undefined = series[0]?.running?.count?.id
  // @ts-expect-error: a running sum applies to numeric fields
  await tasks.aggregate({ groupBy: [{ field: 'due', by: 'DAY' }], running: { sum: ['title'] } })
  // @ts-expect-error: averages have no running form
  await tasks.aggregate({ groupBy: [{ field: 'due', by: 'DAY' }], running: { avg: ['priority'] } })
  // @ts-expect-error: notes is neither filterable nor groupBy
  await tasks.aggregate({ groupBy: [{ field: 'notes' }] })
  // @ts-expect-error: a filterOnly field's values are never given away
  await tasks.aggregate({ max: ['tenant'] })
  return [counted, more, runningCount]
}

/** The untyped service (the plugin's own routes call it so) takes the query model and answers as before. */
export async function untypedCalls(service: ResourceService) {
  const found = await service.find({ query: { filter: { title: { eq: 'x' } } }, queryModel: true })
  const record = await service.get(1, { query: { select: ['title'] }, queryModel: true })
  const created = await service.create({ anything: 1 })
  return [found, record.anything, created.anything]
}
