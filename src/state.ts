import type { FeathersQueryState } from './declarations'

const states = new WeakMap<object, FeathersQueryState>()

/** What the plugin built for an application: its resources, GraphQL schema, OpenAPI document. */
export function feathersQueryState(app: object): FeathersQueryState | undefined {
  return states.get(app)
}

export function setFeathersQueryState(app: object, state: FeathersQueryState) {
  states.set(app, state)
}
