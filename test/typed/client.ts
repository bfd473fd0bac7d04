/**
 * A client application laid out as a Feathers CLI app's src/client.ts, its services typed by their
 * `*.shared.ts` files (type-checked by test/typed-services.test.ts, never run).
 */
import { feathers, type Application, type TransportConnection } from '@feathersjs/feathers'
import restClient from '@feathersjs/rest-client'
import { noteClient, taskClient } from './tasks.shared'

export interface Configuration {
  connection: TransportConnection<ServiceTypes>
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ServiceTypes {}

export type ClientApplication = Application<ServiceTypes, Configuration>

export function createClient(connection: TransportConnection<ServiceTypes>) {
  const client: ClientApplication = feathers()
  client.configure(connection)
  client.set('connection', connection)
  client.configure(taskClient)
  client.configure(noteClient)
  return client
}

export async function typedClientReads() {
  const client = createClient(restClient('http://localhost:3030').fetch(fetch))
  const task = await client.service('tasks').get(1)
  const title: string = task.title
  const page = await client
    .service('tasks')
    .find({ query: { done: false, $sort: { title: 1 }, priority: { $gte: 2 } } })
  const titles: string[] = page.data.map((found) => found.title)
  const groups = await client.service('tasks').aggregate({ groupBy: [{ field: 'done' }], count: ['id'] })
  const counted: number | undefined = groups[0]?.count?.id
  const note = await client.service('notes').create({ body: 'b', rank: 1 })
  const rank: number = note.rank
  // @ts-expect-error: hidden fields are never read
  void task.ownerId
  // @ts-expect-error: notes is a plain Field, which the server does not filter by
  await client.service('tasks').find({ query: { notes: 'x' } })
  // @ts-expect-error: tasks have no field "titel"
  await client.service('tasks').create({ titel: 'typo', done: false, priority: 1, tenant: 'a' })
  // @ts-expect-error: clients cannot partition aggregates
  await client.service('tasks').aggregate({ count: ['id'], partitionBy: 'ownerId' })
  // @ts-expect-error: having names the resource's fields
  await client.service('tasks').aggregate({ count: ['id'], having: { count: { titel: { gt: 1 } } } })
  return [title, titles, counted, rank]
}
