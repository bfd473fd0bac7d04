import type { Knex } from 'knex'

/** The parts of knex's better-sqlite3 client that the plugin adjusts. */
export interface BetterSqliteClient {
  driverName: 'better-sqlite3'
  acquireConnection(): Promise<unknown>
  transaction(container: unknown, config?: unknown, outerTransaction?: unknown): unknown
}

/** `db`'s client when it is better-sqlite3, whose statements run on the event loop; otherwise undefined. */
export function betterSqliteClient(db: Knex): BetterSqliteClient | undefined {
  const client = db.client as Partial<BetterSqliteClient>
  return client.driverName === 'better-sqlite3' ? (client as BetterSqliteClient) : undefined
}

type Setup = (connection: never) => void

const setupsOf = new WeakMap<object, Set<Setup>>()
const appliedTo = new WeakMap<object, Set<Setup>>()

/**
 * Runs `setup` once on every connection the client hands out (to queries and transactions alike), before
 * its first use by the plugin; also on connections made before (by migrations).
 */
export function setUpEachConnection<C>(client: BetterSqliteClient, setup: (connection: C) => void) {
  let setups = setupsOf.get(client)
  if (!setups) {
    const all = new Set<Setup>()
    setups = all
    setupsOf.set(client, all)
    const acquire = client.acquireConnection.bind(client)
    client.acquireConnection = async () => {
      const connection = (await acquire()) as object
      let applied = appliedTo.get(connection)
      if (!applied) appliedTo.set(connection, (applied = new Set()))
      for (const each of all) {
        if (applied.has(each)) continue
        each(connection as never)
        applied.add(each)
      }
      return connection
    }
  }
  setups.add(setup as Setup)
}
