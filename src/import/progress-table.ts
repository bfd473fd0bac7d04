import { Conflict, Unprocessable } from '@feathersjs/errors'
import type { Knex } from 'knex'

/** The plugin's table of imports with an idempotency key: one row per key, in each resource's database. */
export const IMPORTS_TABLE = 'feathers_query_imports'

/** How far an import with a key has come: every line up to `line` is committed (or reported failed). */
export interface ImportProgress {
  line: number
  imported: number
  failed: number
}

const made = new WeakMap<Knex, Promise<void>>()

/**
 * Creates the table if it is missing, once per knex instance. Two processes creating it at once: the loser's
 * CREATE fails, and the table is there.
 */
function ensureTable(knex: Knex) {
  let making = made.get(knex)
  if (!making) {
    making = (async () => {
      if (await knex.schema.hasTable(IMPORTS_TABLE)) return
      await knex.schema
        .createTable(IMPORTS_TABLE, (table) => {
          table.string('key', 200).primary()
          table.string('resource', 200).notNullable()
          table.text('options').notNullable()
          table.bigInteger('line').notNullable()
          table.bigInteger('imported').notNullable()
          table.bigInteger('failed').notNullable()
          table.bigInteger('createdAt').notNullable()
          table.bigInteger('updatedAt').notNullable()
        })
        .catch(async (error: unknown) => {
          if (!(await knex.schema.hasTable(IMPORTS_TABLE))) throw error
        })
    })()
    made.set(knex, making)
    making.catch(() => made.delete(knex))
  }
  return making
}

const numbers = (row: Record<string, unknown>): ImportProgress => ({
  line: Number(row.line),
  imported: Number(row.imported),
  failed: Number(row.failed)
})

/**
 * The progress of the import `key` names, made (at line 0) on its first use. A key used before for another
 * resource or other options is a 422: the same key must mean the same import.
 */
export async function claimKey(knex: Knex, key: string, resource: string, options: string) {
  await ensureTable(knex)
  const read = () => knex(IMPORTS_TABLE).where({ key }).first()
  let row = await read()
  if (!row) {
    const now = Date.now()
    await knex(IMPORTS_TABLE)
      .insert({ key, resource, options, line: 0, imported: 0, failed: 0, createdAt: now, updatedAt: now })
      // Another request made it first: read its row.
      .catch(() => undefined)
    row = await read()
  }
  if (row.resource !== resource || row.options !== options) {
    throw new Unprocessable(
      `Idempotency-Key ${key} was used for another import (${row.resource}, ${row.options}): ` +
        'a key names one import; use a new key for a new one',
      { field: 'Idempotency-Key' }
    )
  }
  return numbers(row)
}

/**
 * Moves the key's progress from `from` to `to`, in the batch's transaction. Nothing moved means another
 * request with the key committed lines meanwhile: a 409, and the batch rolls back, so no line goes in twice.
 */
export async function advanceKey(
  trx: Knex.Transaction,
  key: string,
  from: ImportProgress,
  to: ImportProgress
) {
  const moved = await trx(IMPORTS_TABLE)
    .where({ key, line: from.line })
    .update({ line: to.line, imported: to.imported, failed: to.failed, updatedAt: Date.now() })
  if (moved !== 1) {
    throw new Conflict(`Another request with Idempotency-Key ${key} is importing: retry once it ended`)
  }
}
