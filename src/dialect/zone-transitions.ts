import { BoundedCache } from '../common/bounded-cache'
import { localMidnight, offsetAt } from './zone-offsets'

const SECOND = 1000
const DAY = 86_400_000

/** Before this every zone keeps its first offset (its local mean time) in Node's time-zone data. */
const EARLIEST = Date.UTC(1800, 0, 1)
/**
 * From here every zone follows fixed yearly rules (tzdata's last predicted change is in the 2080s), which
 * repeat with the Gregorian calendar: every 400 years, 146,097 days, the same dates fall on the same weekdays.
 */
export const RULES_FROM = Date.UTC(2100, 0, 1)
export const RULES_PERIOD = 146_097 * DAY
/** The table covers one period of the rules and a margin for local times and periods a little past it. */
const END = RULES_FROM + RULES_PERIOD + 7 * DAY

/** A step function over instants: `values[i]` holds before `bounds[i]` (and from `bounds[i - 1]`). */
export interface Steps {
  bounds: number[]
  values: number[]
}

/**
 * A zone's offsets and local midnights, from 1800 to 400 years past 2100 (later instants repeat them):
 * - `offsets`: the offset from UTC in force at an instant;
 * - `midnights`: for a local date (epoch milliseconds of the date at 00:00 UTC), that date less the instant its
 *   local midnight happens (see `localMidnight`: the earlier of two, the clock change where there is none).
 */
export interface ZoneTransitions {
  offsets: Steps
  midnights: Steps
}

/** An offset parser for scanning: `longOffset` formats about five times faster than `offsetAt`'s parts. */
function quickOffset(zone: string) {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
  return (time: number) => {
    const text = format.format(time)
    const match = /GMT([+-])(\d\d):(\d\d)(?::(\d\d))?$/.exec(text)
    if (!match) return 0
    const [, sign, hours, minutes, seconds] = match
    const size = (Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds ?? 0)) * SECOND
    return sign === '-' ? -size : size
  }
}

/** The first whole second after `from` where `offset` differs from its value at `from`, up to `to`. */
function firstChange(offset: (time: number) => number, from: number, to: number) {
  const before = offset(from)
  let low = from
  let high = to
  while (high - low > SECOND) {
    const middle = low + Math.floor((high - low) / 2 / SECOND) * SECOND
    if (offset(middle) === before) low = middle
    else high = middle
  }
  return high
}

/**
 * Yearly rules ("last Sunday of March", "March 22") put a change 364, 371, 365 or 366 days after the year
 * before's, at the same time of day: tried before bisecting, it is found in two offset reads instead of about 20.
 */
const YEAR_LATER = [364, 371, 365, 366].map((days) => days * DAY)

/** `firstChange`, trying first the instants a year after `changes` found before. */
function nextChange(offset: (time: number) => number, changes: number[], from: number, to: number) {
  const before = offset(from)
  for (let i = changes.length - 1; i >= 0 && changes[i] > from - 372 * DAY; i--) {
    for (const later of YEAR_LATER) {
      const guess = changes[i] + later
      if (guess > from && guess <= to && offset(guess - SECOND) === before && offset(guess) !== before)
        return guess
    }
  }
  return firstChange(offset, from, to)
}

/**
 * How far apart the offset is read while scanning. A step misses changes only when the offset goes back to its
 * value within it (a change and its undoing closer than a step); Node 20's tzdata (2025c), against a scan a
 * day at a time, has none. The shortest such pairs there: 6.96 days from 1900 to 2090 (Boa Vista's daylight
 * saving of 2000, Gaza's breaks for Ramadan predicted to the 2080s), none before 1900 (only the end of local
 * mean time), 126 days in the yearly rules from 2090 (Havana).
 */
const stepAt = (time: number) => (time < REGULAR_BEFORE || time >= REGULAR_FROM ? 91 : 6) * DAY
const REGULAR_BEFORE = Date.UTC(1900, 0, 1)
const REGULAR_FROM = Date.UTC(2090, 0, 1)

/** The instants the zone's offset changes: the offset read a step at a time and bisected where it differs. */
export function changesOf(zone: string) {
  const offset = quickOffset(zone)
  const changes: number[] = []
  let current = offset(EARLIEST)
  for (let time = EARLIEST; time < END;) {
    const next = Math.min(time + stepAt(time), END)
    const then = offset(next)
    // More than one change within a step: each is found in turn.
    for (let from = time; current !== then; current = offset(from)) {
      from = nextChange(offset, changes, from, next)
      changes.push(from)
    }
    time = next
  }
  return changes
}

function stepValue(steps: Steps, time: number) {
  let low = 0
  let high = steps.bounds.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (time < steps.bounds[middle]) high = middle
    else low = middle + 1
  }
  return steps.values[low]
}

/** Consecutive equal values merged. */
function compacted(points: Array<[number, number]>, first: number): Steps {
  const steps: Steps = { bounds: [], values: [first] }
  for (const [at, value] of points) {
    if (value === steps.values[steps.values.length - 1]) continue
    steps.bounds.push(at)
    steps.values.push(value)
  }
  return steps
}

function transitionsOf(zone: string): ZoneTransitions {
  const changes = changesOf(zone)
  // Each interval's offset as `offsetAt` reads it, so that the table agrees with the JavaScript buckets.
  const offsets = compacted(
    changes.map((change) => [change, offsetAt(change, zone)]),
    offsetAt(EARLIEST, zone)
  )
  const offset = (time: number) => stepValue(offsets, time)
  // A local midnight's instant is its date less the offset in force, except within a day or so of a change.
  const days = new Set<number>()
  for (const change of changes) {
    const day = Math.floor(change / DAY) * DAY
    for (let near = -3; near <= 3; near++) days.add(day + near * DAY)
  }
  const points = [...days]
    .sort((a, b) => a - b)
    .map((day): [number, number] => [day, day - localMidnight(day, zone, offset)])
  return { offsets, midnights: compacted(points, offsets.values[0]) }
}

/** Zones clients name are up to them: a few dozen tables are kept (up to 40 KB each), the rest scanned again. */
export const KEPT_ZONES = 32
const cache = new BoundedCache<ZoneTransitions>(KEPT_ZONES)

/** The zone's transitions, scanned on first use and kept while the zone is among the last few dozen. */
export const zoneTransitions = (zone: string): ZoneTransitions => cache.get(zone, () => transitionsOf(zone))
