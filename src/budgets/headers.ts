/** What one take left of a budget, as headers tell it. */
interface Left {
  limit: number
  spent: number
  resetMs: number
}

/** Whole seconds until the window starts again, at least 1 (`Retry-After: 0` would invite a retry storm). */
export function retryAfterSeconds(resetMs: number) {
  return Math.max(1, Math.ceil(resetMs / 1000))
}

/**
 * The IETF draft's `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window
 * starts again), as express-rate-limit and many gateways send them
 * (docs/decisions/budgets.md says why these and not GitHub's `X-RateLimit-*`).
 */
export function rateLimitHeaders(left: Left): Record<string, string> {
  return {
    'RateLimit-Limit': String(left.limit),
    'RateLimit-Remaining': String(Math.max(0, left.limit - left.spent)),
    'RateLimit-Reset': String(retryAfterSeconds(left.resetMs))
  }
}
