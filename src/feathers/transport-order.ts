import type { Application } from '@feathersjs/koa'
import { ConfigurationError } from '../common/errors'

/**
 * Feathers applies a transport to the services registered after it: `rest()` and `socketio()` add service
 * mixins, which services registered earlier never get (their REST requests fail, their events reach no
 * client). When a mixin is added after the plugin's services, start-up fails and says what to move where.
 */
export function checkTransportOrder(app: Application) {
  const mixins = app.mixins.length
  app.hooks({
    setup: [
      async (_context: unknown, next: () => Promise<void>) => {
        if (app.mixins.length > mixins) {
          throw new ConfigurationError(
            'feathersQuery() was configured before a transport (rest(), socketio() or channels()), whose ' +
              'services then miss it. Configure transports first, then services, as the Feathers CLI does: ' +
              'app.configure(rest()); app.configure(socketio()); ... app.configure(feathersQuery({ ... }))'
          )
        }
        await next()
      }
    ]
  })
}
