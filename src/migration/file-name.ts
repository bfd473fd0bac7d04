import { readdirSync } from 'node:fs'

const twoDigits = (value: number) => String(value).padStart(2, '0')

/** knex's migration timestamp, `YYYYMMDDHHmmss` in local time, as `knex migrate:make` names its files. */
function timestamp(date: Date) {
  const parts = [date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds()]
  return `${date.getFullYear()}${parts.map(twoDigits).join('')}`
}

/**
 * The file name of a new migration in `folder`: knex runs migrations in name order, so a name whose
 * timestamp another file already has takes the next second rather than an order of its own.
 */
export function migrationFileName(folder: string, name: string, now = new Date()): string {
  const taken = new Set(readdirSync(folder).map((file) => file.slice(0, 14)))
  let time = now.getTime()
  while (taken.has(timestamp(new Date(time)))) time += 1000
  return `${timestamp(new Date(time))}_${name}.ts`
}
