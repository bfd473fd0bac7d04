import { countRefusal } from '../telemetry/telemetry'

export interface ConnectionLimits {
  maxConnections: number
  maxConnectionsPerUser: number
}

/**
 * Counts the open connections of one transport in the process and per caller (a user by the token's
 * subject), so that no one caller's connections, each fed every event, can slow the server for everybody.
 * `what` names them in refusals ("GraphQL WebSocket connections").
 */
export function connectionAdmission(limits: ConnectionLimits, what: string) {
  let open = 0
  const perCaller = new Map<string, number>()
  return {
    /** Takes a place for `caller`'s connection, or answers why there is none. */
    admit(caller: string): string | undefined {
      if (open >= limits.maxConnections) {
        countRefusal('maxConnections')
        return `The server takes at most ${limits.maxConnections} ${what}`
      }
      const held = perCaller.get(caller) ?? 0
      if (held >= limits.maxConnectionsPerUser) {
        countRefusal('maxConnectionsPerUser')
        return `At most ${limits.maxConnectionsPerUser} ${what} per user`
      }
      open++
      perCaller.set(caller, held + 1)
      return undefined
    },
    release(caller: string) {
      open--
      const held = (perCaller.get(caller) ?? 1) - 1
      if (held > 0) perCaller.set(caller, held)
      else perCaller.delete(caller)
    }
  }
}
