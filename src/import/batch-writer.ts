import type { Knex } from 'knex'
import { inAmbientTransaction, inSavepoint } from '../service/transaction'
import { isLineFailure } from './line-errors'

/** A record ready to be written, with its line. */
export interface BatchRecord {
  line: number
  record: Record<string, unknown>
}

/** Thrown to roll a dry run's batch back once everything in it ran. */
class DryRun extends Error {}

/** A line whose write failed on the first try: the batch is tried again, line by line. */
class LineFailed extends Error {
  constructor(readonly line: number) {
    super(`Line ${line} failed`)
  }
}

export interface BatchOutcome {
  imported: number
  /** Lines whose write failed, with why. */
  failures: Array<{ line: number; error: unknown }>
}

/**
 * Writes one batch of records in one transaction, each through `write` (the service's create: hooks,
 * validation, `authorize`, its events sent once the transaction commits), then `finish` (the key's
 * progress) in the same transaction.
 *
 * The first try writes the records one after the other. If a line fails, that try is rolled back whole and
 * the batch is written again with each line in a savepoint of its own, so a failing line (whose hooks may
 * have written before it failed) leaves nothing behind and the other lines go in. A batch without a
 * failure pays for no savepoint. A failure that is not the line's own (the database gone) ends the import.
 *
 * `dryRun`: everything runs, then the transaction rolls back: the same errors, nothing written, no event.
 */
export async function writeBatch(
  knex: Knex,
  records: BatchRecord[],
  write: (record: Record<string, unknown>) => Promise<unknown>,
  finish: (trx: Knex.Transaction, outcome: BatchOutcome) => Promise<void>,
  dryRun: boolean
): Promise<BatchOutcome> {
  const attempt = (isolated: boolean) => {
    const outcome: BatchOutcome = { imported: 0, failures: [] }
    return inAmbientTransaction(knex, async (trx) => {
      for (const { line, record } of records) {
        try {
          await (isolated ? inSavepoint(knex, () => write({ ...record })) : write({ ...record }))
          outcome.imported++
        } catch (error) {
          if (!isLineFailure(error)) throw error
          if (!isolated) throw new LineFailed(line)
          outcome.failures.push({ line, error })
        }
      }
      await finish(trx, outcome)
      if (dryRun) throw new DryRun()
      return outcome
    }).catch((error: unknown) => {
      if (error instanceof DryRun) return outcome
      throw error
    })
  }
  try {
    return await attempt(false)
  } catch (error) {
    if (!(error instanceof LineFailed)) throw error
    return attempt(true)
  }
}
