import type { HookContext, NextFunction } from '@feathersjs/feathers'
import type { Knex } from 'knex'
import { AsyncLocalStorage } from 'node:async_hooks'
import { databaseError, isDriverError } from '../dialect/database-errors'
import { writeTransaction } from '../dialect/sqlite-locks'
import { copyWith } from '../common/copy-with'

interface Ambient {
  knex: Knex
  trx: Knex.Transaction
  /** What is to be announced once the transaction commits, in the order it was queued. */
  announcements: Array<() => void>
}

const ambient = new AsyncLocalStorage<Ambient>()

/** What the work of a transaction hands knex to commit with; the transaction resolves to it once committed. */
const COMMITTED = Symbol('committed')

/**
 * The transaction a mutation hook chain runs in, for statements on the same database. Resource-service
 * calls that hooks make inside the chain join it without passing `params.transaction`; otherwise, on SQLite's
 * single connection, they would wait for the very connection the transaction holds.
 */
export function ambientTransaction(knex: Knex): Knex.Transaction | undefined {
  const current = ambient.getStore()
  return current && current.knex === knex && !current.trx.isCompleted() ? current.trx : undefined
}

/**
 * Queues `announce` (a write's events) until the ambient transaction on `knex` commits, in the order the
 * writes were made, and drops it if the transaction rolls back. Without one open, answers false.
 */
export function announceOnCommit(knex: Knex, announce: () => void): boolean {
  const current = ambient.getStore()
  if (!current || current.knex !== knex || current.trx.isCompleted()) return false
  current.announcements.push(announce)
  return true
}

/**
 * Runs `work` in one transaction that resource-service calls made inside it join without passing
 * `params.transaction` (or in the one already open), e.g. the several writes of a GraphQL relation mutation.
 */
export async function inAmbientTransaction<T>(
  knex: Knex,
  work: (trx: Knex.Transaction) => Promise<T>
): Promise<T> {
  const open = ambientTransaction(knex)
  if (open) return work(open)
  let workFailure: { error: unknown } | undefined
  let result: T | undefined
  const announcements: Ambient['announcements'] = []
  const outcome = await runTransaction(
    writeTransaction(knex, (trx) =>
      ambient.run({ knex, trx, announcements }, async () => {
        result = await work(trx).catch((error: unknown) => {
          workFailure = { error }
          throw error
        })
        return COMMITTED
      })
    ),
    () => workFailure
  )
  // A hook that rolled the transaction back itself (`trx.rollback()`, which knex resolves with nothing)
  // wrote nothing to announce.
  if (outcome === COMMITTED) for (const announce of announcements) announce()
  return result as T
}

/**
 * Runs `work` in a savepoint of the ambient transaction on `knex` (one must be open): what it wrote and the
 * events it queued are undone alone when it fails, the rest of the transaction going on. What an import
 * does with one line of a batch that failed (see `import/batch-writer.ts`).
 */
export async function inSavepoint<T>(knex: Knex, work: () => Promise<T>): Promise<T> {
  const current = ambient.getStore()
  if (!current || current.knex !== knex) throw new Error('inSavepoint needs an open ambient transaction')
  const announcements: Ambient['announcements'] = []
  const result = await current.trx.transaction((savepoint) =>
    ambient.run({ knex, trx: savepoint, announcements }, work)
  )
  current.announcements.push(...announcements)
  return result
}

/**
 * An around hook that runs the whole call — the application's before and after hooks included — in one
 * transaction, so that a hook failing after the write leaves no partial row. A caller's own transaction
 * (`params.transaction`, as @feathersjs/knex's transaction hooks set it) is joined instead.
 */
export function transactional(knex: Knex) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return async (context: HookContext<any, any>, next: NextFunction) => {
    if (context.params.transaction?.trx || ambientTransaction(knex)) return next()
    await inAmbientTransaction(knex, async (trx) => {
      context.params = copyWith(context.params, { transaction: { trx } })
      await next()
      // The transaction is this hook's; it must not leak to whoever reads the context afterwards.
      const { transaction: _transaction, ...params } = context.params
      context.params = params
    })
  }
}

/**
 * What the chain threw is the answer, even when the ROLLBACK failed too (on a lost connection) and knex
 * reports that instead. Feathers errors and an application hook's TypeError stay as they are; a driver's
 * error (of a hook's statement, or of the transaction itself: begin, commit) is a database error.
 */
async function runTransaction(
  transaction: Promise<unknown>,
  chainFailure: () => { error: unknown } | undefined
) {
  try {
    return await transaction
  } catch (error) {
    const failure = chainFailure() ?? { error }
    throw isDriverError(failure.error) ? databaseError(failure.error) : failure.error
  }
}

/**
 * An application-wide around hook: a call that a plugin write's hooks make to another service on the same
 * knex instance — a @feathersjs/knex `KnexService`, whose `options.Model` is that instance — gets the write's
 * transaction as `params.transaction`, the way @feathersjs/knex's own transaction hooks pass one. It then
 * reads and writes inside the transaction instead of waiting for a connection the transaction holds (on
 * SQLite, the only one).
 */
export function shareTransaction() {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return async (context: HookContext<any, any>, next: NextFunction) => {
    const Model = (context.service as { options?: { Model?: Knex } })?.options?.Model
    if (!context.params?.transaction && Model) {
      const trx = ambientTransaction(Model)
      if (trx) context.params = copyWith(context.params, { transaction: { trx } })
    }
    return next()
  }
}
