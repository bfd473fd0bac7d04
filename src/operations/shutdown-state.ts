/** The applications a graceful shutdown began on: their readiness route answers 503 from then on. */
const stopping = new WeakSet<object>()

export function markShuttingDown(app: object) {
  stopping.add(app)
}

export function isShuttingDown(app: object | undefined) {
  return app !== undefined && stopping.has(app)
}
