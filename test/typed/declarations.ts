import type { Application as FeathersApplication } from '@feathersjs/koa'

// As a Feathers CLI app's src/declarations.ts: each service file adds its service to ServiceTypes.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ServiceTypes {}

export type Application = FeathersApplication<ServiceTypes>
