/** What one take from a budget got. */
export interface Taken {
  /** What was taken: between the minimum and what was wanted, or 0 when the budget had less than the minimum. */
  granted: number
  /** What the window has spent, this take included. */
  spent: number
  /** Milliseconds until the window starts again. */
  resetMs: number
}

/**
 * Where budgets are counted. Each budget is a fixed window: the first take starts it, and it starts again
 * `windowMs` later. `take` checks and spends in one step, so callers running at once (in one process or,
 * with Redis, in many) never spend more than the budget between them.
 */
export interface BudgetStore {
  /** Takes up to `want` (at least `minimum`, else nothing) of what is left of `limit` in the window. */
  take(key: string, want: number, minimum: number, limit: number, windowMs: number): Promise<Taken>
  /** Corrects a take by what the work really cost (negative gives back), within the same window only. */
  settle(key: string, delta: number): Promise<void>
}

interface Window {
  spent: number
  resetsAt: number
}

/** Windows ended are dropped every this many takes, so keys of callers gone do not pile up. */
const SWEEP_EVERY = 1000

/** Budgets held in this process (each instance of a scaled-out application has its own). */
export function memoryStore(now: () => number = Date.now): BudgetStore {
  const windows = new Map<string, Window>()
  let takes = 0
  const sweep = (time: number) => {
    for (const [key, window] of windows) if (window.resetsAt <= time) windows.delete(key)
  }
  return {
    async take(key, want, minimum, limit, windowMs) {
      const time = now()
      if (++takes % SWEEP_EVERY === 0) sweep(time)
      let window = windows.get(key)
      if (!window || window.resetsAt <= time) {
        window = { spent: 0, resetsAt: time + windowMs }
        windows.set(key, window)
      }
      const left = Math.max(0, limit - window.spent)
      const granted = left < minimum ? 0 : Math.min(want, left)
      window.spent += granted
      return { granted, spent: window.spent, resetMs: window.resetsAt - time }
    },
    async settle(key, delta) {
      const window = windows.get(key)
      if (window && window.resetsAt > now()) window.spent = Math.max(0, window.spent + delta)
    }
  }
}
