import { rssOf, startScript } from '../../bench/support/processes'

/** Where a server process keeps its data: a database URL and how to drop it afterwards. */
export interface ProcessDatabase {
  url: string
  drop(): Promise<void>
}

export interface ServerProcess {
  readonly port: number
  /** Live memory: the JS heap after a full collection (a leak shows there), and the resident set. */
  memory(): Promise<{ heap: number; rss: number }>
}

/**
 * Declares mocha hooks that run the example server in a Node process of its own, so that its memory is its
 * own, started with --expose-gc on the database `open` makes (and fills), and stop it afterwards.
 */
export function serverProcess(open: () => Promise<ProcessDatabase>): ServerProcess {
  let database: ProcessDatabase | undefined
  let server: ReturnType<typeof startScript> | undefined
  let port = 0
  before(async function () {
    this.timeout(120000)
    database = await open()
    server = startScript('support/example-server.ts', { DATABASE_URL: database.url }, ['--expose-gc'])
    port = Number((await server.ready).payload)
  })
  after(async () => {
    server?.child.kill()
    await database?.drop()
  })
  return {
    get port() {
      return port
    },
    async memory() {
      const usage = (await (await fetch(`http://127.0.0.1:${port}/__gc`)).json()) as NodeJS.MemoryUsage
      return { heap: usage.heapUsed, rss: rssOf(server!.child.pid!) }
    }
  }
}
