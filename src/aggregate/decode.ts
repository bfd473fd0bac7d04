import { badField } from '../errors'
import { decodeValue } from '../resource/codec'
import type { AggregateResponse, PartitionedAggregates } from '../query/model'
import type { AggregateColumn, AggregatePlan, GroupColumn } from './plan'

type Row = Record<string, unknown>

/** A date bucket comes back as `YYYY-MM-DD` from every dialect; clients get its start as an ISO timestamp. */
function decodeGroup(group: GroupColumn, value: unknown) {
  if (!group.bucket) return decodeValue(group.field.kind, value)
  return value === null || value === undefined ? null : `${decodeValue('string', value)}T00:00:00.000Z`
}

/** The column where a database that cannot answer Infinity says that a sum or average overflowed. */
export const overflowAlias = (alias: string) => `${alias}_overflowed`

/**
 * Drivers return counts as BIGINT and MySQL sums and averages as DECIMAL, possibly as strings. A sum or an
 * average past the largest double has no number in JSON or GraphQL: SQLite answered Infinity and MariaDB 0,
 * so it is refused, the same on every database, rather than answered wrongly.
 */
function decodeAggregate({ fn, field, alias }: AggregateColumn, row: Row) {
  const value = row[alias]
  if (fn === 'count') return Number(value ?? 0)
  if (fn !== 'sum' && fn !== 'avg') return decodeValue(field.kind, value)
  // PostgreSQL answers NULL for a sum that overflowed, and says so in the overflow column (true).
  const overflowed = Number(row[overflowAlias(alias)] ?? 0) === 1
  if (!overflowed && (value === null || value === undefined)) return null
  const number = Number(value)
  if (overflowed || !Number.isFinite(number)) {
    throw badField(`${fn}.${field.name}`, `is out of range: beyond ±${Number.MAX_VALUE}`)
  }
  return number
}

/** One response with only the requested members. */
function decodeResponse(plan: AggregatePlan, row: Row): AggregateResponse {
  const response: AggregateResponse = {}
  if (plan.groups.length) {
    response.groupBy = Object.fromEntries(
      plan.groups.map((group) => [group.field.name, decodeGroup(group, row[group.alias])])
    )
  }
  for (const column of plan.aggregates) {
    const member = (response[column.fn] ??= {}) as Record<string, unknown>
    member[column.field.name] = decodeAggregate(column, row)
  }
  return response
}

/**
 * What a set of no records aggregates to: no groups, or without groupBy the single entry SQL gives for an
 * empty table (counts 0, everything else null).
 */
function emptyResponses(plan: AggregatePlan): AggregateResponse[] {
  return plan.groups.length ? [] : [decodeResponse(plan, {})]
}

export function decodeResponses(plan: AggregatePlan, rows: Row[]): AggregateResponse[] {
  return rows.length ? rows.map((row) => decodeResponse(plan, row)) : emptyResponses(plan)
}

/** Rows arrive ordered by the partition key, then by the group keys. */
export function decodePartitions(plan: AggregatePlan, rows: Row[]): PartitionedAggregates {
  const partition = plan.partition!
  const partitions = new Map<string, { key: unknown; responses: AggregateResponse[] }>()
  for (const row of rows) {
    const key = decodeGroup(partition, row[partition.alias])
    let entry = partitions.get(String(key))
    if (!entry) {
      entry = { key, responses: [] }
      partitions.set(String(key), entry)
    }
    entry.responses.push(decodeResponse(plan, row))
  }
  return { partitions: [...partitions.values()], empty: emptyResponses(plan) }
}
