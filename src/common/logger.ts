/**
 * Where the plugin reports what went wrong on the server (a 500's cause, a failed event listener): anything
 * with an `error(message)` method, such as the Feathers CLI app's winston `logger` or `console`.
 */
export interface Logger {
  error(message: string): unknown
  /** Where a client's request the database refused goes (console, winston and pino have it). */
  warn?(message: string): unknown
}

const loggers = new WeakMap<object, Logger>()

/** The logger `feathersQuery({ logger })` gave the application; `console` until one is given. */
export function loggerOf(app: object | undefined): Logger {
  return (app && loggers.get(app)) || console
}

export function setLogger(app: object, logger: Logger) {
  loggers.set(app, logger)
}

/** An error as one message: its stack where it has one, so that the log says where it came from. */
export function logFailure(logger: Logger, error: unknown) {
  logger.error(error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error))
}

/**
 * A client's error the database refused (a 4xx with a cause): logged with `warn` where the logger has one,
 * since the client caused it, not the server; a logger with `error` only is for the server's failures, and
 * is not told.
 */
export function logRefusal(logger: Logger, error: Error) {
  logger.warn?.(error.stack ?? `${error.name}: ${error.message}`)
}
