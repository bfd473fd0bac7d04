import type { BudgetStore } from './store'

/** What the Redis store needs of a node-redis v5 client (`createClient()` from `redis`, connected). */
export interface RedisBudgetClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
}

/**
 * One take, atomic in Redis: what is left of the window is read and spent in one script, so instances
 * taking at once never spend more than the budget between them. The first take of a window sets its expiry
 * (PEXPIRE), which ends it for every instance at once.
 */
const TAKE = `
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local want, minimum, limit, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local left = math.max(0, limit - spent)
local granted = 0
if left >= minimum then granted = math.min(want, left) end
spent = redis.call('INCRBY', KEYS[1], granted)
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
return { granted, spent, ttl }
`

/** A correction within the window the take was in: once it ended, the new window owes nothing. */
const SETTLE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local spent = redis.call('INCRBY', KEYS[1], ARGV[1])
if spent < 0 then redis.call('SET', KEYS[1], 0, 'KEEPTTL') end
return 1
`

/** Budgets counted in Redis, shared by every instance using the same server and prefix. */
export function redisStore(client: RedisBudgetClient, prefix = 'feathers-query:budget:'): BudgetStore {
  return {
    async take(key, want, minimum, limit, windowMs) {
      const [granted, spent, resetMs] = (await client.eval(TAKE, {
        keys: [prefix + key],
        arguments: [want, minimum, limit, windowMs].map(String)
      })) as number[]
      return { granted: Number(granted), spent: Number(spent), resetMs: Number(resetMs) }
    },
    async settle(key, delta) {
      if (delta === 0) return
      await client.eval(SETTLE, { keys: [prefix + key], arguments: [String(delta)] })
    }
  }
}
