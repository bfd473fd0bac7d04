import type { DateBucket } from '../model/aggregate'
import { offsetAt } from '../dialect/zone-offsets'
import { bucketKey, bucketStart } from './time-zone'

/**
 * The buckets a date bucket is compared with, in JavaScript like the buckets of a fill (`time-zone.ts`): the
 * statement joins each bucket's name to these names, so every database answers the same calendar.
 */

const HOUR = 3_600_000

/** The start of the bucket just before the one starting at `start`: the one holding the instant before. */
export const previousBucket = (start: number, bucket: DateBucket, zone: string) =>
  bucketStart(start - 1, bucket, zone)

/** `months` months back from a local date, the day kept or clamped to the month's last (31 March: 28 February). */
function monthsBack(local: Date, months: number) {
  const day = local.getUTCDate()
  const shifted = new Date(local.getTime())
  shifted.setUTCDate(1)
  shifted.setUTCMonth(shifted.getUTCMonth() - months)
  const lastDay = new Date(shifted.getTime())
  lastDay.setUTCMonth(lastDay.getUTCMonth() + 1, 0)
  shifted.setUTCDate(Math.min(day, lastDay.getUTCDate()))
  return shifted
}

/** The same local wall time one `period` earlier; a WEEK bucket's YEAR is 52 weeks (the same weekday). */
function wallTimeEarlier(local: Date, bucket: DateBucket, period: DateBucket) {
  const earlier = new Date(local.getTime())
  switch (period) {
    case 'DAY':
      earlier.setUTCDate(earlier.getUTCDate() - 1)
      return earlier
    case 'WEEK':
      earlier.setUTCDate(earlier.getUTCDate() - 7)
      return earlier
    case 'MONTH':
      return monthsBack(local, 1)
    case 'QUARTER':
      return monthsBack(local, 3)
    default:
      if (bucket === 'WEEK') {
        earlier.setUTCDate(earlier.getUTCDate() - 364)
        return earlier
      }
      return monthsBack(local, 12)
  }
}

/**
 * The start of the same bucket one `period` earlier, in `zone`'s calendar: the bucket holding the same local
 * wall time a period back, so that across a daylight-saving change an HOUR's day earlier is still the same
 * hour on the clock. Days and longer are shifted from their local noon, where no clock change reaches.
 */
export function bucketPeriodEarlier(start: number, bucket: DateBucket, period: DateBucket, zone: string) {
  const offset = offsetAt(start, zone)
  const wall = start + offset + (bucket === 'HOUR' ? 0 : 12 * HOUR)
  const earlierWall = wallTimeEarlier(new Date(wall), bucket, period).getTime()
  // The instant that wall time happens: the offset in force then, found from a first guess.
  const guess = earlierWall - offsetAt(earlierWall - offset, zone)
  return bucketStart(earlierWall - offsetAt(guess, zone), bucket, zone)
}

/** Whether `period` is a longer calendar period that `bucket` repeats in (weeks do not fit months). */
export function comparablePeriod(bucket: DateBucket, period: DateBucket, order: readonly DateBucket[]) {
  if (order.indexOf(period) <= order.indexOf(bucket)) return false
  return bucket !== 'WEEK' || period === 'YEAR'
}

/**
 * One bucket of a compared series: its name, its previous bucket's and its period-earlier bucket's; null where
 * that bucket lies outside the range, whose records the request did not read.
 */
export type BucketStep = [key: string, previous: string | null, earlier: string | null]

/** The steps of the buckets named `keys` (starts, `YYYY-MM-DDTHH:MM:SS` in UTC), the range compared. */
export function bucketSteps(keys: string[], bucket: DateBucket, zone: string, period?: DateBucket) {
  const range = new Set(keys)
  const within = (key: string) => (range.has(key) ? key : null)
  return keys.map((key): BucketStep => {
    const start = Date.parse(`${key}Z`)
    const earlier = period ? within(bucketKey(bucketPeriodEarlier(start, bucket, period, zone))) : null
    return [key, within(bucketKey(previousBucket(start, bucket, zone))), earlier]
  })
}
