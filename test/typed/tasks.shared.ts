// As a Feathers CLI app's src/services/tasks/tasks.shared.ts: the resources come in as types only, so the
// client bundle loads neither them nor the server.
import { resourceClient, type RecordOf, type ResourceClientService } from '../../src/client'
import type { noteResource, taskResource } from './resources'

export type Task = RecordOf<typeof taskResource>
export type TaskClientService = ResourceClientService<typeof taskResource>
export const taskPath = 'tasks'
export const taskClient = resourceClient(taskPath)

export const notePath = 'notes'
export const noteClient = resourceClient(notePath, { methods: ['find', 'get', 'create'] })

declare module './client' {
  interface ServiceTypes {
    [taskPath]: TaskClientService
    [notePath]: ResourceClientService<typeof noteResource>
  }
}
