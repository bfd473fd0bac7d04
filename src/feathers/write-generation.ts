import type { Application } from '@feathersjs/koa'
import type { HookContext, NextFunction } from '@feathersjs/feathers'
import { randomBytes } from 'node:crypto'

const WRITE_EVENTS = ['created', 'updated', 'patched', 'removed']
/** The methods known to write nothing; any other (a custom method too) may write, and is counted. */
const READ_METHODS = new Set(['find', 'get', 'aggregate'])

/** How far the application's data has moved since this process started: what conditional reads compare. */
export interface WriteGeneration {
  /** Random per application instance, so that a restarted process never answers a tag of the last one. */
  readonly epoch: string
  /** Grows with every write of any service of the application. */
  current(): number
}

interface Counter extends WriteGeneration {
  bump(): void
}

const counters = new WeakMap<object, Counter>()

function counterOf(app: object): Counter {
  let counter = counters.get(app)
  if (!counter) {
    let generation = 0
    counter = {
      epoch: randomBytes(16).toString('base64url'),
      current: () => generation,
      bump: () => {
        generation++
      }
    }
    counters.set(app, counter)
  }
  return counter
}

/** The application's write generation (see `countWrites`). */
export function writeGenerationOf(app: object): WriteGeneration {
  return counterOf(app)
}

/**
 * Counts the writes of every service of the application, the plugin's and any other (a users service an
 * `authorize` rule reads decides what a caller sees as much as the resource does):
 * - when any method but a read returns (a custom method may write), so that a write's own answer is never
 *   followed by a stale 304 here, even when feathers-sync sends its event through Redis before this process
 *   hears it;
 * - at each service event, which the plugin emits after the commit, and which feathers-sync replays on the
 *   services of every other instance: a read that ran between the method's return and the commit is tagged
 *   with a generation the event then leaves behind.
 */
export function countWrites(app: Application) {
  const counter = counterOf(app)
  app.hooks({
    around: {
      all: [
        async (context: HookContext, next: NextFunction) => {
          try {
            await next()
          } finally {
            if (!READ_METHODS.has(context.method)) counter.bump()
          }
        }
      ]
    }
  })
  const watched = new WeakSet<object>()
  const watch = (service: unknown) => {
    const emitter = service as { on?: (event: string, listener: () => void) => unknown } | undefined
    if (!emitter || typeof emitter.on !== 'function' || watched.has(emitter)) return
    watched.add(emitter)
    for (const event of WRITE_EVENTS) emitter.on(event, counter.bump)
  }
  for (const service of Object.values(app.services)) watch(service)
  app.mixins.push((service: unknown) => watch(service))
}
