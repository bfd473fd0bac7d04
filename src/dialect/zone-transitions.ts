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
 * The instants the zone's offset changes. Scanned a day at a time up to 2100, where changes are irregular
 * (two changes within a day of each other would be missed: tzdata has none), a week at a time in the rules'
 * period, whose changes are months apart.
 */
function changesOf(zone: string) {
  const offset = quickOffset(zone)
  const changes: number[] = []
  let current = offset(EARLIEST)
  for (let time = EARLIEST; time < END;) {
    const next = Math.min(time + (time < RULES_FROM ? DAY : 7 * DAY), END)
    const then = offset(next)
    // More than one change within a step: each is found in turn.
    for (let from = time; current !== then; current = offset(from)) {
      from = firstChange(offset, from, next)
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

const cache = new Map<string, ZoneTransitions>()

/** The zone's transitions, scanned once per zone and kept. */
export function zoneTransitions(zone: string): ZoneTransitions {
  let transitions = cache.get(zone)
  if (!transitions) {
    transitions = transitionsOf(zone)
    cache.set(zone, transitions)
  }
  return transitions
}
