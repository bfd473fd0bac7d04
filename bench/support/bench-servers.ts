import type { ChildProcess } from 'node:child_process'
import { seedSubTasks, seedTodoItems, type BenchDatabase } from './databases'
import { resolve } from 'node:path'
import { startScript } from './processes'

export interface BenchServer {
  port: number
  pid: number
  child: ChildProcess
}

/**
 * The example server and the raw Koa + knex baseline on `database`, each in its own process with
 * --expose-gc (for /__gc and /__heap), once `items` todo items spread over 730 days (grouping by day then
 * gives as many groups as in issue 22's measurements) with 10 sub tasks each are seeded. With `graphqlFloor`,
 * the GraphQL floor server too (graphql-http and graphql-js over the baseline's reads); with `bare`, the bare
 * handler (hand-written SQL, no body parser); with `feathers`, the app a Feathers user would write instead (a
 * KnexService with the CLI's schema hooks); with `before`, another checkout's example server. `exampleEnv` is
 * added to the example servers' environment. `stop()` ends them all, also when seeding failed.
 */
export async function startBenchServers(
  database: BenchDatabase,
  items: number,
  options: {
    graphqlFloor?: boolean
    bare?: boolean
    feathers?: boolean
    exampleEnv?: Record<string, string>
    /** Another checkout whose example server (its own build in lib/) runs beside this one's, as `before`. */
    before?: string
  } = {}
) {
  const optional = {
    graphqlFloor: 'support/graphql-floor-server.ts',
    bare: 'support/bare-server.ts',
    feathers: 'support/feathers-server.ts'
  }
  const chosen = (Object.keys(optional) as Array<keyof typeof optional>).filter((name) => options[name])
  const scripts = [
    'support/example-server.ts',
    'support/baseline-server.ts',
    ...chosen.map((name) => optional[name])
  ]
  const started = scripts.map((script, index) =>
    startScript(script, { DATABASE_URL: database.url, ...(index === 0 ? options.exampleEnv : {}) }, [
      '--expose-gc'
    ])
  )
  const before = options.before
    ? startScript(
        resolve(options.before, 'bench/support/example-server.ts'),
        {
          DATABASE_URL: database.url,
          TSX_TSCONFIG_PATH: resolve(options.before, 'bench/tsconfig.json'),
          ...options.exampleEnv
        },
        ['--expose-gc']
      )
    : undefined
  if (before) started.push(before)
  const stop = () => {
    for (const script of started) script.child.kill()
  }
  try {
    await seedTodoItems(database.db, items, { spanDays: 730 })
    await seedSubTasks(database.db, 10)
    const [server, baseline, ...others] = (await Promise.all(started.map((script) => script.ready))).map(
      ({ child, payload }): BenchServer => ({ port: Number(payload), pid: child.pid!, child })
    )
    const byName = new Map(chosen.map((name, index) => [name, others[index]]))
    return {
      server,
      baseline,
      before: before ? others[chosen.length] : undefined,
      graphqlFloor: byName.get('graphqlFloor'),
      bare: byName.get('bare'),
      feathers: byName.get('feathers'),
      stop
    }
  } catch (error) {
    stop()
    throw error
  }
}
