import { BoundedCache } from '../common/bounded-cache'
import { UTC } from './dialect'

/**
 * A time zone's offsets from UTC and its local midnights, from Node's time-zone data (Intl): what date buckets
 * in a zone are computed from, in JavaScript (`aggregate/time-zone.ts`) and in SQLite's SQL
 * (`zone-transitions.ts`).
 */

const HOUR = 3_600_000

/**
 * Formats by zone, about 31 KB each. Callers pass canonical names (`aggregate/plan.ts`), but a zone has many
 * spellings (`europe/berlin`: 4,096 letter cases), so the number kept is bounded all the same.
 */
const formats = new BoundedCache<Intl.DateTimeFormat>(64)

/** Whether Node's time-zone data knows `zone`, an IANA name such as `Europe/Berlin`. Nothing is kept. */
export function isTimeZone(zone: string) {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

function formatIn(zone: string) {
  return formats.get(
    zone,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric'
      })
  )
}

/** The zone's offset from UTC at `time` (epoch milliseconds), in milliseconds (whole seconds). */
export function offsetAt(time: number, zone: string) {
  if (zone === UTC) return 0
  const parts: Record<string, string> = {}
  for (const part of formatIn(zone).formatToParts(time)) parts[part.type] = part.value
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year)
  const local = new Date(0)
  local.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day))
  local.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second))
  return local.getTime() - Math.floor(time / 1000) * 1000
}

/**
 * The instant local midnight of the day `localDay` (epoch milliseconds of that date at 00:00 UTC) happens in
 * `zone`, trying the offsets in force half a day either side. Where it happens twice the earlier is taken,
 * and where it does not (clocks moved forward at midnight) the instant the clocks moved. `offset` answers the
 * zone's offset at an instant (`offsetAt` unless told).
 */
export function localMidnight(
  localDay: number,
  zone: string,
  offset: (time: number) => number = (time) => offsetAt(time, zone)
) {
  const before = localDay - offset(localDay - 12 * HOUR)
  const after = localDay - offset(localDay + 12 * HOUR)
  const happens = (time: number) => time + offset(time) === localDay
  if (happens(before) && happens(after)) return Math.min(before, after)
  if (happens(before) || happens(after)) return happens(before) ? before : after
  return Math.max(before, after)
}
