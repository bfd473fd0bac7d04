import type { Knex } from 'knex'
import { BoundedCache } from '../common/bounded-cache'
import type { DateBucket } from '../model/aggregate'
import type { SqlColumn } from './dialect'
import { RULES_FROM, RULES_PERIOD, zoneTransitions, type Steps } from './zone-transitions'

/**
 * Date buckets in a named time zone on SQLite in SQL alone, for drivers that cannot register a function
 * (node-sqlite3): the zone's offsets and local midnights (`zone-transitions.ts`) written into the statement
 * as CASE expressions of numbers, each a binary search (about 11 comparisons a row for a zone with daylight
 * saving time). The answer is the bucket's start in epoch milliseconds, the same instant
 * `aggregate/time-zone.ts` computes; the statement groups by it and names it after grouping.
 */

const HOUR = 3_600_000
const DAY = 86_400_000

/** `steps` at the value of the SQL expression `x` (a name: it is repeated at every comparison). */
function stepCase(x: string, { bounds, values }: Steps): string {
  const range = (low: number, high: number): string => {
    if (low === high) return String(values[low])
    const middle = (low + high) >> 1
    return `CASE WHEN ${x} < ${bounds[middle]} THEN ${range(low, middle)} ELSE ${range(middle + 1, high)} END`
  }
  return range(0, values.length - 1)
}

/**
 * Local time `v` (epoch milliseconds of the local wall-clock time) to the local date the period holding it
 * starts on, at 00:00 UTC. Whole days and weeks in integers (SQLite's `%` keeps the dividend's sign);
 * months, quarters and years with SQLite's date modifiers.
 */
const LOCAL_START: Record<Exclude<DateBucket, 'HOUR'>, string> = {
  DAY: `v - (v % ${DAY} + ${DAY}) % ${DAY}`,
  // 1970-01-01, day 0, was a Thursday: 3 days after a Monday.
  WEEK: `(SELECT (d - ((d + 3) % 7 + 7) % 7) * ${DAY} FROM (SELECT (v - (v % ${DAY} + ${DAY}) % ${DAY}) / ${DAY} AS d))`,
  MONTH: `CAST(strftime('%s', v / 1000.0, 'unixepoch', 'start of month') AS INTEGER) * 1000`,
  QUARTER: `CAST(strftime('%s', v / 1000.0, 'unixepoch', 'start of month', '-' || ((CAST(strftime('%m', v / 1000.0, 'unixepoch') AS INTEGER) - 1) % 3) || ' months') AS INTEGER) * 1000`,
  YEAR: `CAST(strftime('%s', v / 1000.0, 'unixepoch', 'start of year') AS INTEGER) * 1000`
}

/**
 * `SELECT columns FROM (inner)`, where SQLite computes inner's columns once a row: a derived table with an
 * OFFSET is never flattened into its query, which would copy an expression (a whole CASE tree) into every
 * place that reads its column.
 */
const over = (columns: string, inner: string) => `SELECT ${columns} FROM (${inner} LIMIT -1 OFFSET 0)`

/**
 * Statements by bucket and zone: a zone's are 54 to 114 KB each, so a few dozen are kept (8 MB at most) and
 * the rest written again, whatever zones clients name.
 */
const statements = new BoundedCache<string>(64, 8_000_000, (sql) => sql.length)

/**
 * The SQL of a bucket's start, `?` standing for the column, computed a step at a time (`over`). Instants past
 * the table (`RULES_FROM` and 400 years) are moved back by whole periods of the rules (`k` of them), and the
 * start forward again.
 */
const bucketSql = (bucket: DateBucket, zone: string) =>
  statements.get(`${bucket} ${zone}`, () => writeBucketSql(bucket, zone))

function writeBucketSql(bucket: DateBucket, zone: string) {
  const { offsets, midnights } = zoneTransitions(zone)
  const periods = `CASE WHEN t >= ${RULES_FROM + RULES_PERIOD} THEN (t - ${RULES_FROM}) / ${RULES_PERIOD} ELSE 0 END`
  const folded = over(`t, k, t - k * ${RULES_PERIOD} AS u`, over(`t, ${periods} AS k`, 'SELECT ? AS t'))
  const withOffset = over(`t, k, u, ${stepCase('u', offsets)} AS o`, folded)
  return bucket === 'HOUR'
    ? // The local hour's start: the instant less its local minutes, seconds and milliseconds.
      `(${over(`t - ((u + o) % ${HOUR} + ${HOUR}) % ${HOUR}`, withOffset)})`
    : `(${over(
        `l - ${stepCase('l', midnights)} + k * ${RULES_PERIOD}`,
        over(`k, ${LOCAL_START[bucket]} AS l`, over('k, u + o AS v', withOffset))
      )})`
}

/** The start of the bucket holding `column`'s instant in `zone`, in epoch milliseconds. */
export function zoneBucketStart(knex: Knex, column: SqlColumn, bucket: DateBucket, zone: string) {
  return knex.raw(bucketSql(bucket, zone), [knex.raw('??', [column])])
}

/** A grouped bucket start's name, `YYYY-MM-DDTHH:MM:SS` in UTC (starts are whole seconds). */
export const zoneBucketName = (knex: Knex, start: string) =>
  knex.raw("strftime('%Y-%m-%dT%H:%M:%S', ?? / 1000, 'unixepoch')", [start])
