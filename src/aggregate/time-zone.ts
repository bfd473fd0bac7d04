import type { DateBucket } from '../model/aggregate'
import { localMidnight, offsetAt } from '../dialect/zone-offsets'

/**
 * Date buckets in a time zone's calendar, in JavaScript: what SQLite computes through the function the plugin
 * registers on better-sqlite3 connections (SQLite has no time zones), and the buckets of a zero-filled series.
 * MariaDB and PostgreSQL compute the same in SQL (`dateBuckets` in `dialect/mysql.ts`, `dialect/postgres.ts`),
 * and so does SQLite on node-sqlite3 (`dialect/sqlite-zone-buckets.ts`); the tests hold each to these.
 *
 * A bucket is named by the instant it starts, as `YYYY-MM-DDTHH:MM:SS` in UTC:
 * - HOUR: the local hour holding the instant, at the offset in force then, so that the two 02:00 hours of a
 *   night the clocks go back are two buckets, each one hour long;
 * - DAY, WEEK (from Monday, ISO), MONTH, QUARTER, YEAR: from local midnight of the local date the period
 *   starts on, so buckets are 23, 24 or 25 hours long across daylight-saving changes.
 */

const HOUR = 3_600_000

/** The local date's first day of the bucket, as epoch milliseconds at 00:00 UTC of that date. */
function periodStart(local: Date, bucket: Exclude<DateBucket, 'HOUR'>) {
  const year = local.getUTCFullYear()
  const month = local.getUTCMonth()
  // setUTCFullYear takes years 0 to 99 as they are (Date.UTC would read 1900 to 1999), and days out of range.
  const date = (y: number, m: number, d: number) => new Date(0).setUTCFullYear(y, m, d)
  switch (bucket) {
    case 'DAY':
      return date(year, month, local.getUTCDate())
    case 'WEEK':
      // getUTCDay is 0 on Sunday: the Monday of the ISO week is (day + 6) % 7 days back.
      return date(year, month, local.getUTCDate() - ((local.getUTCDay() + 6) % 7))
    case 'MONTH':
      return date(year, month, 1)
    case 'QUARTER':
      return date(year, month - (month % 3), 1)
    case 'YEAR':
      return date(year, 0, 1)
  }
}

/** The start of the bucket holding `time` (epoch milliseconds) in `zone`, as epoch milliseconds. */
export function bucketStart(time: number, bucket: DateBucket, zone: string) {
  const offset = offsetAt(time, zone)
  if (bucket === 'HOUR') {
    const local = time + offset
    return time - (((local % HOUR) + HOUR) % HOUR)
  }
  return localMidnight(periodStart(new Date(time + offset), bucket), zone)
}

/** The start of the bucket after the one starting at `start`. */
function nextBucket(start: number, bucket: DateBucket, zone: string) {
  if (bucket === 'HOUR') return start + HOUR
  const local = new Date(start + offsetAt(start, zone))
  const step: Record<Exclude<DateBucket, 'HOUR'>, () => void> = {
    DAY: () => local.setUTCDate(local.getUTCDate() + 1),
    WEEK: () => local.setUTCDate(local.getUTCDate() + 7),
    MONTH: () => local.setUTCMonth(local.getUTCMonth() + 1, 1),
    QUARTER: () => local.setUTCMonth(local.getUTCMonth() + 3, 1),
    YEAR: () => local.setUTCFullYear(local.getUTCFullYear() + 1, 0, 1)
  }
  step[bucket]()
  // Twelve hours in, where no clock change reaches, then back to the period's start.
  return bucketStart(localMidnight(periodStart(local, bucket), zone) + 12 * HOUR, bucket, zone)
}

/** A bucket's name: its start as `YYYY-MM-DDTHH:MM:SS`, in UTC. */
export function bucketKey(start: number) {
  return new Date(start).toISOString().slice(0, 19)
}

/** The bucket name of `time`, or null for no time: what SQLite's registered function answers. */
export function bucketKeyOf(time: number | null, bucket: DateBucket, zone: string) {
  return time === null ? null : bucketKey(bucketStart(time, bucket, zone))
}

/**
 * The names of the buckets from the one holding `from` to the one holding `to`, or undefined when there
 * would be more than `max` of them.
 */
export function bucketSeries(from: number, to: number, bucket: DateBucket, zone: string, max: number) {
  const keys: string[] = []
  const last = bucketStart(to, bucket, zone)
  for (let start = bucketStart(from, bucket, zone); start <= last; start = nextBucket(start, bucket, zone)) {
    if (keys.length === max) return undefined
    keys.push(bucketKey(start))
  }
  return keys
}
