// Copied into the Feathers CLI app of test/package/cli-app.test.ts and compiled by the app's own
// `npm run compile`, never run: each `@ts-expect-error` that is no error fails the compile, and so the test.
import type { Application } from './declarations'
import type { ClientApplication } from './client'

export async function typedServices(app: Application) {
  const tasks = app.service('tasks')
  const task = await tasks.get(1)
  const title: string = task.title
  const done: boolean = task.done
  // @ts-expect-error a hidden field never leaves the server, so the record has none
  void task.ownerId
  await tasks.find({ query: { done: false, projectId: { $in: [1, 2] }, $sort: { title: 1 }, $limit: 5 } })
  // @ts-expect-error an unknown query field
  await tasks.find({ query: { titel: 'x' } })
  // @ts-expect-error a value of the wrong type in a query
  await tasks.find({ query: { done: 'yes' } })
  await tasks.create({ title: 'typed', projectId: 1 })
  // @ts-expect-error a misspelled field
  await tasks.create({ titel: 'typo', projectId: 1 })
  // @ts-expect-error a value of the wrong type
  await tasks.create({ title: 5, projectId: 1 })
  // @ts-expect-error the id is read-only: the database makes it
  await tasks.create({ id: 5, title: 'x', projectId: 1 })
  await tasks.patch(1, { done: true })
  const groups = await tasks.aggregate({ groupBy: [{ field: 'done' }], count: ['id'] })
  // @ts-expect-error aggregate names the resource's fields
  await tasks.aggregate({ count: ['nope'] })
  const project = await app.service('projects').get(1)
  const name: string = project.name
  return [title, done, groups, name]
}

export async function typedClient(client: ClientApplication) {
  const tasks = client.service('tasks')
  const page = await tasks.find({ query: { done: false, $limit: 5 } })
  const titles: string[] = page.data.map((task) => task.title)
  // @ts-expect-error an unknown query field
  await tasks.find({ query: { titel: 'x' } })
  // @ts-expect-error a misspelled field
  await tasks.create({ titel: 'typo', projectId: 1 })
  const groups = await tasks.aggregate({ groupBy: [{ field: 'projectId' }], count: ['id'] })
  return [titles, groups]
}
