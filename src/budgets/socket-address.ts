import type { Application } from '@feathersjs/feathers'

interface SocketServer {
  use(middleware: (socket: SocketLike, next: (error?: Error) => void) => void): void
}

interface SocketLike {
  handshake: { address?: string }
  feathers?: Record<string, unknown>
}

/**
 * Puts the address of each socket.io connection in the params of its calls (`params.ip`), as the HTTP
 * surfaces do, so that an anonymous caller has a budget of its own. Runs after Feathers' own middleware,
 * which makes `socket.feathers`; an application without socket.io has nothing to do here.
 */
export function addressSockets(app: Application) {
  const io = (app as { io?: SocketServer }).io
  if (!io || typeof io.use !== 'function') return
  io.use((socket, next) => {
    if (socket.feathers && socket.handshake.address) socket.feathers.ip = socket.handshake.address
    next()
  })
}
