import type { ChildProcess } from 'node:child_process'
import { seedSubTasks, seedTodoItems, type BenchDatabase } from './databases'
import { startScript } from './processes'

export interface BenchServer {
  port: number
  pid: number
  child: ChildProcess
}

/**
 * The example server and the raw Koa + knex baseline on `database`, each in its own process with
 * --expose-gc (for /__gc and /__heap), once `items` todo items spread over 730 days (grouping by day then
 * gives as many groups as in issue 22's measurements) with 10 sub tasks each are seeded. `stop()` ends both,
 * also when seeding failed.
 */
export async function startServerPair(database: BenchDatabase, items: number) {
  const started = [
    startScript('support/example-server.ts', { DATABASE_URL: database.url }, ['--expose-gc']),
    startScript('support/baseline-server.ts', { DATABASE_URL: database.url }, ['--expose-gc'])
  ]
  const stop = () => {
    for (const script of started) script.child.kill()
  }
  try {
    await seedTodoItems(database.db, items, { spanDays: 730 })
    await seedSubTasks(database.db, 10)
    const [server, baseline] = (await Promise.all(started.map((script) => script.ready))).map(
      ({ child, payload }): BenchServer => ({ port: Number(payload), pid: child.pid!, child })
    )
    return { server, baseline, stop }
  } catch (error) {
    stop()
    throw error
  }
}
