import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { logFailure, loggerOf } from '../common/logger'
import { DEFAULTS } from '../resource/defaults'
import { markShuttingDown } from './shutdown-state'

export interface GracefulShutdownOptions {
  /** The signals that start the shutdown (default SIGTERM, what containers are sent, and SIGINT). */
  signals?: NodeJS.Signals[]
  /**
   * How long in-flight requests may take to finish, and then connections to close, in milliseconds (default
   * 10,000): past it the remaining connections are cut.
   */
  timeout?: number
  /** Whether the process exits once shut down (default true): 0 when all went well, 1 otherwise. */
  exit?: boolean
}

/** What the shutdown needs of a Feathers application: its socket.io server, when it has one, and `teardown`. */
interface ShuttingDownApp {
  io?: { path(): string; engine?: { clients: Record<string, EngineSocket> } }
  teardown(server?: Server): Promise<unknown>
}

interface EngineSocket {
  transport?: { name?: string; socket?: { close(code: number, reason: string): void } }
  close(): void
}

/** The close code of a server going away (RFC 6455): clients reconnect, to another instance. */
const GOING_AWAY = 1001

const delay = (milliseconds: number) =>
  new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), milliseconds).unref())

/** Counts the HTTP requests being answered; socket.io's long polls are connections, not requests to wait for. */
function inFlightRequests(server: Server, socketIoPath: string | undefined) {
  let count = 0
  let drained: (() => void) | undefined
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (socketIoPath && request.url?.startsWith(`${socketIoPath}/`)) return
    count++
    response.once('close', () => {
      count--
      // Connections kept alive after their answer would otherwise hold the server open (once idle).
      if (!server.listening) setImmediate(() => server.closeIdleConnections())
      if (count === 0) drained?.()
    })
  })
  return {
    finished: () =>
      count === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            drained = resolve
          })
  }
}

/** socket.io's connections closed as graphql-ws closes its own: close code 1001 where it is a WebSocket. */
function closeSocketIoClients(app: ShuttingDownApp) {
  for (const socket of Object.values(app.io?.engine?.clients ?? {})) {
    const { transport } = socket
    if (transport?.name === 'websocket' && transport.socket) {
      transport.socket.close(GOING_AWAY, 'Server shutting down')
    } else socket.close()
  }
}

/**
 * Stops the application gracefully on SIGTERM or SIGINT: the HTTP server stops accepting connections (and the
 * readiness route answers 503), requests in flight finish, then WebSocket clients, socket.io's and
 * GraphQL's, are closed with code 1001 (going away), then `app.teardown()` runs and the process exits. Each
 * wait is bounded by `timeout`: requests still running past it are cut before teardown, and a teardown that
 * does not end within it is left behind (exit code 1). A second signal exits at once. Call it once, with the
 * server `app.listen` returned; the function it returns starts the shutdown without a signal and resolves
 * when it is done.
 */
export function gracefulShutdown(
  app: ShuttingDownApp,
  server: Server,
  options: GracefulShutdownOptions = {}
): () => Promise<void> {
  const {
    signals = [...DEFAULTS.shutdown.signals],
    timeout = DEFAULTS.shutdown.timeout,
    exit = true
  } = options
  const requests = inFlightRequests(server, app.io?.path())
  let shuttingDown: Promise<void> | undefined

  const shutDown = async () => {
    markShuttingDown(app)
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    let clean = (await Promise.race([requests.finished(), delay(timeout)])) !== 'late'
    // Requests past the deadline are cut now: teardown's `server.close` waits for every connection to end.
    if (!clean) server.closeAllConnections()
    closeSocketIoClients(app)
    // Closes GraphQL's WebSocket clients (1001), the services, and the HTTP server (already closing).
    const tornDown = app.teardown(server).then(
      () => 'done' as const,
      (error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ERR_SERVER_NOT_RUNNING') return 'done' as const
        logFailure(loggerOf(app), error)
        return 'failed' as const
      }
    )
    const ended = await Promise.race([Promise.all([tornDown, closed]), delay(timeout)])
    if (ended === 'late') {
      clean = false
      server.closeAllConnections()
    } else if (ended[0] === 'failed') clean = false
    if (exit) process.exit(clean ? 0 : 1)
  }

  const onSignal = () => {
    if (shuttingDown) process.exit(1)
    shuttingDown = shutDown()
  }
  for (const signal of signals) process.on(signal, onSignal)
  return () => {
    for (const signal of signals) process.off(signal, onSignal)
    shuttingDown ??= shutDown()
    return shuttingDown
  }
}
