import assert from 'node:assert/strict'
import { createTestDatabase, databaseNames } from './support/databases'
import { serverProcess } from './support/server-process'

/**
 * Statements are compiled (and on SQLite prepared) once per shape and kept for the next call of that shape.
 * Clients choose the shapes, so what is kept must not grow with them: not with the lengths of `in` lists,
 * which once made every request a new statement of 10,000 stand-ins, nor with ever new filters.
 */
const COUNT = `query Count($filter: TodoItemFilter) { todoItems(filter: $filter) { totalCount } }`

/** mulberry32: the same requests on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`
/** Growth of the live heap allowed: what is kept is bounded at 1 MB per resource (and 1 MB prepared). */
const LIMIT = 6 * 2 ** 20

for (const name of databaseNames) {
  describe(`Statement memory: what is kept per shape stays bounded [${name}]`, function () {
    const server = serverProcess(() => createTestDatabase(name))

    async function count(filter: unknown) {
      const response = await fetch(`http://127.0.0.1:${server.port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: COUNT, variables: { filter } })
      })
      const body = (await response.json()) as { errors?: unknown }
      assert.equal(body.errors, undefined, JSON.stringify(body.errors))
    }

    it('keeps no more for in lists of ever new lengths', async function () {
      this.timeout(120000)
      const next = random(1)
      const ids = (from: number) =>
        Array.from({ length: 900 + Math.floor(next() * 100) }, (_, index) => from + index)
      const lists = () => Array.from({ length: 10 }, (_, list) => ({ id: { notIn: ids(list * 1000) } }))
      for (let request = 0; request < 5; request++) await count({ and: lists() })
      const warm = await server.memory()
      for (let request = 0; request < 60; request++) await count({ and: lists() })
      const after = await server.memory()
      // Each new length used to keep about a megabyte of compiled statement (and as much prepared on SQLite).
      console.log(`      heap ${mb(warm.heap)} → ${mb(after.heap)}, RSS ${mb(warm.rss)} → ${mb(after.rss)}`)
      assert.ok(after.heap - warm.heap < LIMIT, `the heap grew from ${mb(warm.heap)} to ${mb(after.heap)}`)
    })

    it('keeps what ever new filters compile within a bounded size', async function () {
      this.timeout(180000)
      const next = random(2)
      const comparisons = [
        { title: { iLike: '%x%' } },
        { title: { notILike: 'x%' } },
        { title: { like: 'x_' } },
        { title: { notLike: '_x' } },
        { priority: { between: { lower: 1, upper: 2 } } },
        { priority: { notBetween: { lower: 1, upper: 2 } } },
        { created: { gte: '2026-01-01T00:00:00.000Z' } },
        { created: { lt: '2026-01-01T00:00:00.000Z' } }
      ]
      // 100 comparisons, each one of 8: no two requests share a shape.
      const filter = () => ({
        or: Array.from({ length: 100 }, () => comparisons[Math.floor(next() * comparisons.length)])
      })
      for (let request = 0; request < 20; request++) await count(filter())
      const warm = await server.memory()
      for (let request = 0; request < 600; request++) await count(filter())
      const after = await server.memory()
      console.log(`      heap ${mb(warm.heap)} → ${mb(after.heap)}, RSS ${mb(warm.rss)} → ${mb(after.rss)}`)
      assert.ok(after.heap - warm.heap < LIMIT, `the heap grew from ${mb(warm.heap)} to ${mb(after.heap)}`)
    })
  })
}
