/** Close code of a connection refused for the server's or its user's limit of connections. */
export const TOO_MANY_CONNECTIONS_CLOSE_CODE = 4429
/** Close code of a connection whose access token expired (as a 401 would say over HTTP). */
export const TOKEN_EXPIRED_CLOSE_CODE = 4401

export interface ConnectionLimits {
  maxConnections: number
  maxConnectionsPerUser: number
}

/**
 * Counts the open GraphQL WebSocket connections of the process and of each caller (a user by the token's
 * subject, an anonymous caller by address), so that no one caller's idle connections, each fed every event,
 * can slow the server for everybody.
 */
export function connectionAdmission(limits: ConnectionLimits) {
  let open = 0
  const perCaller = new Map<string, number>()
  return {
    /** Takes a place for `caller`'s connection, or answers why there is none. */
    admit(caller: string): string | undefined {
      if (open >= limits.maxConnections) {
        return `The server takes at most ${limits.maxConnections} GraphQL WebSocket connections`
      }
      const held = perCaller.get(caller) ?? 0
      if (held >= limits.maxConnectionsPerUser) {
        return `At most ${limits.maxConnectionsPerUser} GraphQL WebSocket connections per user`
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
