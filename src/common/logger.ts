/**
 * Where the plugin reports what went wrong on the server (a 500's cause, a failed event listener): anything
 * with an `error(message)` method, such as the Feathers CLI app's winston `logger` or `console`.
 */
export interface Logger {
  error(message: string): unknown
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
