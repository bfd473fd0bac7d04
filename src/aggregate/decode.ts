import { badField } from '../common/errors'
import { decodeValue } from '../resource/codec'
import { matchesFilter } from '../query/match-filter'
import {
  isCounting,
  isStatistical,
  type AggregatePage,
  type AggregateResponse,
  type AggregateValues,
  type PartitionedAggregates
} from '../model/aggregate'
import type { AggregatePlan } from './plan'
import { earlierAlias, previousAlias, runningAlias, stepAlias } from './series'
import type { AggregateColumn, GroupColumn } from './plan-columns'

type Row = Record<string, unknown>
export type Rows = Row[]

/** Row numbers and counts of windowed statements, and MariaDB's word on each time zone. */
export const ROW = '__fq_row'
export const TOTAL = '__fq_total'
export const ZONE_UNKNOWN = '__fq_zone_unknown_'

/**
 * A date bucket comes back as its start, `YYYY-MM-DDTHH:MM:SS` in UTC, or for whole days in UTC as the date
 * `YYYY-MM-DD` (see `DateBuckets.startIsDate`); clients get it as an ISO timestamp.
 */
function decodeGroup(group: GroupColumn, value: unknown) {
  if (!group.bucket) return decodeValue(group.field.kind, value)
  if (value === null || value === undefined) return null
  const start = decodeValue('string', value) as string
  return start.length === 10 ? `${start}T00:00:00.000Z` : `${start}.000Z`
}

/** The column where a database that cannot answer Infinity says that a sum or average overflowed. */
export const overflowAlias = (alias: string) => `${alias}_overflowed`

/**
 * Drivers return counts as BIGINT and MySQL sums and averages as DECIMAL, possibly as strings. A sum or an
 * average past the largest double has no number in JSON or GraphQL: SQLite answered Infinity and MariaDB 0,
 * so it is refused, the same on every database, rather than answered wrongly.
 */
function decodeAggregate({ fn, field, alias }: AggregateColumn, row: Row, path = '') {
  const value = row[alias]
  if (isCounting(fn)) return Number(value ?? 0)
  if (fn !== 'sum' && fn !== 'avg' && !isStatistical(fn)) return decodeValue(field.kind, value)
  // PostgreSQL answers NULL for a sum that overflowed, and says so in the overflow column (true).
  const overflowed = Number(row[overflowAlias(alias)] ?? 0) === 1
  if (!overflowed && (value === null || value === undefined)) return null
  const number = Number(value)
  if (overflowed || !Number.isFinite(number)) {
    throw badField(`${path}${fn}.${field.name}`, `is out of range: beyond ±${Number.MAX_VALUE}`)
  }
  return number
}

/** A related record's group key nested as its relations are: `todoItem.completed` is `{todoItem: {completed}}`. */
function setPath(groupBy: Record<string, unknown>, name: string, value: unknown) {
  const members = name.split('.')
  let at = groupBy
  for (const member of members.slice(0, -1)) at = (at[member] ??= {}) as Record<string, unknown>
  at[members[members.length - 1]] = value
}

/** One response with only the requested members. */
function decodeResponse(plan: AggregatePlan, row: Row): AggregateResponse {
  const response: AggregateResponse = {}
  if (plan.groups.length) {
    // A loop, not Object.fromEntries: hundreds of groups per response, each would allocate its entry pairs.
    const groupBy: Record<string, unknown> = {}
    for (const group of plan.groups) {
      const value = decodeGroup(group, row[group.alias])
      if (group.relations) setPath(groupBy, group.name, value)
      else groupBy[group.name] = value
    }
    response.groupBy = groupBy
  }
  for (const column of plan.aggregates) {
    if (column.hidden) continue
    const owner =
      column.fn === 'percentile'
        ? ((response.percentile ??= {})[String(column.p)] ??= {})
        : ((response[column.fn] ??= {}) as Record<string, unknown>)
    owner[column.field.name] = decodeAggregate(column, row)
  }
  const { series } = plan
  if (series) {
    const values = (member: string, columns: AggregateColumn[], aliasOf: (alias: string) => string) => {
      const answer: AggregateValues = {}
      for (const column of columns) {
        const byField = (answer[column.fn] ??= {}) as Record<string, unknown>
        const aliased = { ...column, alias: aliasOf(column.alias) }
        byField[column.field.name] = decodeAggregate(aliased, row, `${member}.`)
      }
      return answer
    }
    if (series.running.length) {
      // A record without a date has no place in the calendar, so no running values (see series-sql.ts).
      const dated = row[series.group.alias] !== null && row[series.group.alias] !== undefined
      response.running = dated ? values('running', series.running, runningAlias) : null
    }
    // A compared bucket outside the range was not read: its values are unknown, not zero.
    const read = (step: string) => row[stepAlias(step)] !== null && row[stepAlias(step)] !== undefined
    if (series.previous.length) {
      response.previous = read('__fq_previous') ? values('previous', series.previous, previousAlias) : null
    }
    if (series.periodAgo.length && series.period) {
      response.periodAgo = read('__fq_earlier') ? values('periodAgo', series.periodAgo, earlierAlias) : null
    }
  }
  return response
}

/**
 * What a set of no records aggregates to: no groups, or without groupBy the single entry SQL gives for an
 * empty table (counts 0, everything else null) unless `having` refuses that entry.
 */
function emptyResponses(plan: AggregatePlan): AggregateResponse[] {
  if (plan.groups.length || plan.paging?.offset) return []
  if (plan.having) {
    const zero = Object.fromEntries(
      plan.aggregates.map(({ fn, field }) => [`${fn}.${field.name}`, isCounting(fn) ? 0 : null])
    )
    if (!matchesFilter(plan.having.resource, zero, plan.having.filter)) return []
  }
  return [decodeResponse(plan, {})]
}

/**
 * MariaDB answers NULL for a time zone it has no data for, and its time-zone tables are empty until loaded:
 * without this check the groups would silently be one NULL bucket. A 400, so that the message reaches the
 * client (who may group in UTC or another zone) and names the server's fix.
 */
function checkZones(plan: AggregatePlan, rows: Row[]) {
  if (!rows.length) return
  plan.zones.forEach((zone, index) => {
    if (Number(rows[0][`${ZONE_UNKNOWN}${index}`] ?? 0) !== 1) return
    const group = plan.groups.findIndex((candidate) => candidate.zone === zone)
    throw badField(
      `groupBy.${group}.timeZone`,
      `"${zone}" is unknown to the database. On MariaDB and MySQL the server needs its time-zone tables: ` +
        'mariadb-tzinfo-to-sql /usr/share/zoneinfo | mariadb -u root mysql'
    )
  })
}

/** Rows without groupBy: SQL answers one row for any set of records, none when `having` refused it. */
export function decodeResponses(plan: AggregatePlan, rows: Row[]): AggregateResponse[] {
  checkZones(plan, rows)
  return rows.map((row) => decodeResponse(plan, row))
}

/** One page: the rows after `offset` (a counted page also carries its first row for the count). */
export function decodePage(plan: AggregatePlan, rows: Row[]): AggregatePage {
  checkZones(plan, rows)
  const { limit, offset } = plan.paging!
  const windowed = rows.length > 0 && rows[0][ROW] !== undefined
  const page = windowed ? rows.filter((row) => Number(row[ROW]) > offset) : rows
  const result: AggregatePage = {
    data: page.slice(0, limit).map((row) => decodeResponse(plan, row)),
    limit,
    skip: offset,
    hasNextPage: page.length > limit
  }
  if (plan.totalCount) result.total = rows.length ? Number(rows[0][TOTAL]) : 0
  return result
}

/** Rows arrive ordered by the partition key, then in the requested order (with paging: numbered per key). */
export function decodePartitions(plan: AggregatePlan, rows: Row[]): PartitionedAggregates {
  checkZones(plan, rows)
  const partition = plan.partition!
  const limit = plan.paging?.limit ?? Infinity
  const partitions = new Map<
    string,
    { key: unknown; responses: AggregateResponse[]; hasNextPage?: boolean }
  >()
  for (const row of rows) {
    const key = decodeGroup(partition, row[partition.alias])
    let entry = partitions.get(String(key))
    if (!entry) {
      entry = { key, responses: [], ...(plan.paging ? { hasNextPage: false } : {}) }
      partitions.set(String(key), entry)
    }
    if (entry.responses.length < limit) entry.responses.push(decodeResponse(plan, row))
    else entry.hasNextPage = true
  }
  return { partitions: [...partitions.values()], empty: emptyResponses(plan) }
}
