import { TooManyRequests } from '@feathersjs/errors'
import type { Application, HookContext } from '@feathersjs/feathers'
import { connectionAdmission } from '../common/connection-admission'

export interface RealtimeOptions {
  /** Real-time (socket.io) connections one user may hold logged in at once; a login past it is a 429. */
  maxConnectionsPerUser?: number
}

interface LoginResult {
  authentication?: { payload?: { sub?: unknown } }
  user?: { id?: unknown; _id?: unknown }
}

/** Who logged in: the token's subject (what GraphQL over WebSocket counts by too), else the user's id. */
function subjectOf(result: LoginResult | undefined): string | undefined {
  const subject = result?.authentication?.payload?.sub ?? result?.user?.id ?? result?.user?._id
  return subject === undefined || subject === null ? undefined : String(subject)
}

/**
 * Bounds the real-time connections each user holds logged in: every event of a resource is decided and sent
 * per connection, so one user's thousand connections would make every write cost a thousand deliveries. A
 * hook after the authentication service's `create` refuses the login past the bound, inside the hooks that
 * would otherwise emit `login` and authenticate the connection, so a refused connection stays anonymous; a
 * connection counts until it logs out or disconnects. Without an authentication service there are no users
 * to count.
 */
export function limitConnectionsPerUser(app: Application, maxConnectionsPerUser: number) {
  const defaultAuthentication = (app as { defaultAuthentication?: () => unknown }).defaultAuthentication
  const authentication = defaultAuthentication?.call(app) as { hooks?: (hooks: object) => void } | undefined
  if (!authentication?.hooks) return
  const admission = connectionAdmission(
    { maxConnections: Infinity, maxConnectionsPerUser },
    'real-time connections'
  )
  /** The subject each counted connection logged in as. */
  const holder = new WeakMap<object, string>()
  const release = (connection: object | undefined) => {
    const subject = connection && holder.get(connection)
    if (subject === undefined) return
    holder.delete(connection!)
    admission.release(subject)
  }
  app.on('disconnect', (connection: object) => release(connection))
  app.on('logout', (_result: unknown, params: { connection?: object }) => release(params?.connection))
  authentication.hooks({
    after: {
      create: [
        (context: HookContext) => {
          const connection = context.params.connection as object | undefined
          const subject = subjectOf(context.result as LoginResult)
          if (!connection || subject === undefined || holder.get(connection) === subject) return
          release(connection)
          const refusal = admission.admit(subject)
          if (refusal) {
            throw new TooManyRequests(`${refusal} are logged in at once; close one (or log it out) first`)
          }
          holder.set(connection, subject)
        }
      ]
    }
  })
}
