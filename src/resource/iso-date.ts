const DAY = 86_400_000
/**
 * 0001-01-01 and 9999-12-31T23:59:59.999Z: the years ISO 8601 writes with four digits, and the instants every
 * supported database stores and compares (MariaDB reads a later one as year 10000 and compares it wrongly).
 */
const FIRST = -62_135_596_800_000
const LAST = 253_402_300_799_999

export const DATE_RANGE = 'between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z'

/** Whether an instant (epoch milliseconds) is one every database stores: see FIRST and LAST. */
export function isStorableDate(ms: number) {
  return ms >= FIRST && ms <= LAST
}

/** RFC 3339: a date, `T`, a time (fractions beyond milliseconds are dropped) and `Z` or an offset. */
const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,3})\d*)?(?:Z|([+-])(\d\d):(\d\d))$/i

/** Days from 1970-01-01 to a proleptic Gregorian date: the inverse of the conversion in `isoDate`. */
function daysFromCivil(year: number, month: number, day: number) {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

function daysInMonth(year: number, month: number) {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
}

/**
 * The instant an RFC 3339 date-time with an offset names, in epoch milliseconds, or NaN when the text is not
 * one: every date-time the API takes (REST query strings and bodies, GraphQL's DateTime, filters from hooks)
 * is read here, so each surface takes the same ones. The day must exist (`2026-02-30` does not: Date.parse
 * would read it as March 2), hours run to 23, minutes and seconds to 59, offsets to ±23:59.
 */
export function parseIsoDate(text: string): number {
  const match = DATE_TIME.exec(text)
  if (!match) return NaN
  const [year, month, day, hours, minutes, seconds] = match.slice(1, 7).map(Number)
  const millis = Number((match[7] ?? '0').padEnd(3, '0'))
  const sign = match[8] === '-' ? -1 : 1
  const [offsetHours, offsetMinutes] = [Number(match[9] ?? 0), Number(match[10] ?? 0)]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN
  if (hours > 23 || minutes > 59 || seconds > 59 || offsetHours > 23 || offsetMinutes > 59) return NaN
  const time = ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
  return daysFromCivil(year, month, day) * DAY + time - sign * (offsetHours * 60 + offsetMinutes) * 60_000
}

/** The character code of a decimal digit. */
const digit = (n: number) => 48 + n

/**
 * `new Date(ms).toISOString()`, faster: every date of every record passes through here, and allocating a Date
 * to format it is a measurable part of serving a page. The calendar arithmetic is the proleptic Gregorian
 * days-to-civil conversion; outside four-digit years Date does it. The text is made in one allocation from
 * its character codes: joining its parts with `+` or a template made a string per step (about 470 bytes of
 * garbage per date, a third of what a GraphQL page allocated).
 */
export function isoDate(ms: number): string {
  if (!Number.isInteger(ms) || ms < FIRST || ms > LAST) return new Date(ms).toISOString()
  const days = Math.floor(ms / DAY)
  let rest = ms - days * DAY
  // Days since 0000-03-01, in 400-year eras of 146,097 days; March-based years put leap days last.
  const shifted = days + 719_468
  const era = Math.floor(shifted / 146_097)
  const dayOfEra = shifted - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  // prettier-ignore
  return String.fromCharCode(
    digit(Math.floor(year / 1000)), digit(Math.floor(year / 100) % 10), digit(Math.floor(year / 10) % 10),
    digit(year % 10), 45 /* - */, digit(Math.floor(month / 10)), digit(month % 10), 45 /* - */,
    digit(Math.floor(day / 10)), digit(day % 10), 84 /* T */, digit(Math.floor(hours / 10)), digit(hours % 10),
    58 /* : */, digit(Math.floor(minutes / 10)), digit(minutes % 10), 58 /* : */, digit(Math.floor(seconds / 10)),
    digit(seconds % 10), 46 /* . */, digit(Math.floor(millis / 100)), digit(Math.floor(millis / 10) % 10),
    digit(millis % 10), 90 /* Z */
  )
}
