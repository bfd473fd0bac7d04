import assert from 'node:assert/strict'
import { changesOf, KEPT_ZONES, zoneTransitions } from '../src/dialect/zone-transitions'

/**
 * The zone tables SQLite's buckets on node-sqlite3 are written from (`dialect/zone-transitions.ts`): scanned in
 * coarse steps, they hold the changes a day-by-day scan finds, and only a few dozen zones are kept.
 */

const SECOND = 1000
const DAY = 86_400_000

/** The reference: the offset read every day from 1800 to 400 years past 2100, each change bisected. */
function dailyChanges(zone: string) {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
  const offset = (time: number) => format.format(time).replace(/^.* /, '')
  const changes: number[] = []
  const end = Date.UTC(2100, 0, 1) + 146_097 * DAY + 7 * DAY
  let current = offset(Date.UTC(1800, 0, 1))
  for (let time = Date.UTC(1800, 0, 1); time < end;) {
    const next = Math.min(time + DAY, end)
    for (let from = time; current !== offset(next); current = offset(from)) {
      const before = offset(from)
      let low = from
      let high = next
      while (high - low > SECOND) {
        const middle = low + Math.floor((high - low) / 2 / SECOND) * SECOND
        if (offset(middle) === before) low = middle
        else high = middle
      }
      from = high
      changes.push(from)
    }
    time = next
  }
  return changes
}

describe('SQLite zone tables: offset changes and the zones kept', function () {
  this.timeout(60_000)

  // Morocco's changes around Ramadan (to 2087), Samoa skipping a day, half-hour and 45-minute daylight saving.
  for (const zone of [
    'Africa/Casablanca',
    'Pacific/Apia',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'Europe/Dublin'
  ]) {
    it(`finds the changes a daily scan finds in ${zone}`, () => {
      assert.deepEqual(changesOf(zone), dailyChanges(zone))
    })
  }

  it(`keeps the tables of ${KEPT_ZONES} zones, whatever zones clients name`, () => {
    const first = zoneTransitions('Europe/Berlin')
    assert.equal(zoneTransitions('Europe/Berlin'), first)
    const others = Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'Europe/Berlin')
    for (const zone of others.slice(0, KEPT_ZONES)) zoneTransitions(zone)
    const again = zoneTransitions('Europe/Berlin')
    assert.notEqual(again, first, 'scanned again once evicted')
    assert.deepEqual(again, first)
  })
})
