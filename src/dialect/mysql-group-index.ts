import type { Knex } from 'knex'
import type { GroupedRead, GroupIndexes } from './dialect'

/**
 * MariaDB and MySQL group by reading an index on the first group column in key order whenever one exists,
 * to spare a temporary table. When that index lacks a column the statement reads (an averaged `priority`
 * beside an index on `completed`), every row is then fetched from the table in index order, several times
 * slower than scanning the table. When an index holds every column the statement reads, reading it in order
 * is the fastest plan there is (above all for a MIN/MAX it can skip through), so the optimizer is told to
 * leave its indexes out of the grouping only when none of the indexes it would group by covers the statement.
 * Filters may still use any index.
 */

/** Each index of a table: its columns in key order. */
type TableIndexes = string[][]

const indexesOf = new WeakMap<Knex.Client, Map<string, Promise<TableIndexes>>>()

/**
 * The table's indexes, read once per knex client and table with SHOW INDEX (an index added later is seen
 * after a restart). The service reads them when the app is set up, so no request waits for it.
 */
export function tableIndexes(knex: Knex, table: string): Promise<TableIndexes> {
  let tables = indexesOf.get(knex.client)
  if (!tables) indexesOf.set(knex.client, (tables = new Map()))
  let indexes = tables.get(table)
  if (!indexes) {
    indexes = knex.raw('SHOW INDEX FROM ??', [table]).then(([rows]: [Array<Record<string, unknown>>]) => {
      const byName = new Map<string, string[]>()
      for (const row of rows) {
        const columns = byName.get(String(row.Key_name)) ?? []
        columns[Number(row.Seq_in_index) - 1] = String(row.Column_name)
        byName.set(String(row.Key_name), columns)
      }
      return [...byName.values()]
    })
    // A table that is not there yet (migrations after the first request) is asked again next time.
    indexes.catch(() => tables!.delete(table))
    tables.set(table, indexes)
  }
  return indexes
}

/**
 * Whether the statement should say `USE INDEX FOR GROUP BY ()`: an index leads with the first group column,
 * and no index leading with the group columns holds every column read.
 */
export async function shouldIgnoreGroupIndexes(knex: Knex, read: GroupedRead): Promise<boolean> {
  const [first] = read.groupColumns
  if (first === undefined) return false
  const indexes = await tableIndexes(knex, read.table)
  const grouping = indexes.filter((columns) => columns[0] === first)
  if (grouping.length === 0) return false
  const needed = [...read.groupColumns, ...read.readColumns]
  const covers = (columns: string[]) =>
    read.groupColumns.every((column, index) => columns[index] === column) &&
    needed.every((column) => columns.includes(column) || read.primaryKey.includes(column))
  return !grouping.some(covers)
}

/** MariaDB's and MySQL's choice of grouping by an index, for the dialect table. */
export const mysqlGroupIndexes: GroupIndexes = {
  preload: async (knex, table) => {
    await tableIndexes(knex, table).catch(() => undefined)
  },
  shouldIgnore: shouldIgnoreGroupIndexes,
  tableWithout: (knex, table) => knex.from(knex.raw('?? USE INDEX FOR GROUP BY ()', [table]))
}
