import type { Knex } from 'knex'

/**
 * Every row of each of `tables`, in id order: taken before and after requests that must change nothing (or
 * exactly what they answered), it shows what they did to the database.
 */
export async function tableRows(db: Knex, tables: string[]): Promise<Array<Array<Record<string, unknown>>>> {
  return Promise.all(tables.map((table) => db(table).select().orderBy('id')))
}
