import type { Application } from '@feathersjs/koa'
import { authorizedPublisher, type Publisher } from './channels'

/** Where @feathersjs/transport-commons keeps the publishers of an application and of each service. */
const PUBLISHERS = Symbol.for('@feathersjs/transport-commons/publishers')
const ALL_EVENTS = Symbol.for('@feathersjs/transport-commons/all-events')

type Publishers = Record<string | symbol, Publisher | undefined>

/**
 * Makes a resource service's events private by default: whichever publisher Feathers picks for an event
 * (the service's own, else the application's, as `channels.ts` registers it), its channels keep only the
 * connections whose user the resource's `authorize` admits to the record. The application's `channels.ts`
 * needs no change for that, and a publisher already wrapped in `authorizedPublisher` is not wrapped twice.
 * Without a real-time transport there is nothing to publish.
 */
export function privateEvents(app: Application, service: unknown, events: string[]) {
  const own = (service as Record<symbol, Publishers | undefined>)[PUBLISHERS]
  if (!own) return
  const wrapped = new WeakMap<Publisher, Publisher>()
  const authorized = (publisher: Publisher | undefined) => {
    // One wrapper per publisher, so that its events keep their order; one already wrapped comes back as it is.
    if (!publisher) return publisher
    let safe = wrapped.get(publisher)
    if (!safe) wrapped.set(publisher, (safe = authorizedPublisher(publisher)))
    return safe
  }
  ;(service as Record<symbol, Publishers>)[PUBLISHERS] = new Proxy(own, {
    get(target, key) {
      if (typeof key !== 'string' || !events.includes(key)) return target[key]
      const appPublishers = (app as unknown as Record<symbol, Publishers | undefined>)[PUBLISHERS] ?? {}
      // Feathers' own precedence: the service's publisher of the event, of all its events, then the app's.
      return authorized(target[key] ?? target[ALL_EVENTS] ?? appPublishers[key] ?? appPublishers[ALL_EVENTS])
    }
  })
}
