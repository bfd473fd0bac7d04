import type { Knex } from 'knex'
import { sqliteUpsert } from './upsert'
import type { DbValue } from '../resource/codec'
import type { DateBucket } from '../model/aggregate'
import {
  UTC,
  wholeDaysInUtc,
  type DateBuckets,
  type Dialect,
  type ListBinding,
  type Rows,
  type SqlColumn
} from './dialect'
import { betterSqliteClient } from './better-sqlite3'
import { zoneBucketName, zoneBucketStart } from './sqlite-zone-buckets'

/** A JSON array as SQLite stores its members: dates as epoch milliseconds, booleans as 1 and 0. */
function jsonList(members: readonly DbValue[]) {
  return JSON.stringify(members.map((member) => (member instanceof Date ? member.getTime() : member)))
}

/**
 * SQLite: the whole list as one JSON array, read by json_each, whatever its length. It costs what a
 * placeholder per value did, and the index on the column is still used.
 */
const jsonEachList: ListBinding = {
  bind: (members) => [jsonList(members)],
  where: (builder, column, [list], negate) =>
    builder.whereRaw(`?? ${negate ? 'not in' : 'in'} (select value from json_each(?))`, [column, list])
}

/** GLOB's own wildcards, as GLOB patterns matching them literally. */
const GLOB_LITERALS: Record<string, string> = { '[': '[[]', '*': '[*]', '?': '[?]' }
const LIKE_TO_GLOB: Record<string, string> = { ...GLOB_LITERALS, '%': '*', _: '?' }

/**
 * SQLite's LIKE ignores ASCII case, so case-sensitive matching uses GLOB with the pattern translated: `%` and
 * `_` become GLOB's wildcards, GLOB's own are made literal, and `\x` (LIKE's escape on MySQL and
 * PostgreSQL) is a literal x. The parser has refused a pattern ending in a lone backslash.
 */
function likeToGlob(pattern: string) {
  return pattern.replace(/\\([\s\S])|[[*?%_]/g, (match: string, escaped: string | undefined) =>
    escaped === undefined ? LIKE_TO_GLOB[match] : (GLOB_LITERALS[escaped] ?? escaped)
  )
}

/** The name of the function the plugin registers on better-sqlite3 connections (see `sqlite-functions.ts`). */
export const SQLITE_BUCKET_FUNCTION = 'feathers_query_date_bucket'

/**
 * Dates are stored as epoch milliseconds; `/ 1000.0` keeps the fraction, which integer division would not.
 * Buckets of whole days are grouped by their date (`YYYY-MM-DD`, which date() makes faster than strftime()
 * makes a name) and named after grouping; an hour is grouped by its name.
 */
const UTC_BUCKETS: Record<DateBucket, string> = {
  HOUR: "strftime('%Y-%m-%dT%H:00:00', ?? / 1000.0, 'unixepoch')",
  DAY: "date(?? / 1000.0, 'unixepoch')",
  // 'weekday 0' moves forward to the next Sunday (or stays on one); six days back is the ISO week's Monday.
  WEEK: "date(?? / 1000.0, 'unixepoch', 'weekday 0', '-6 days')",
  MONTH: "date(?? / 1000.0, 'unixepoch', 'start of month')",
  // The month's start, moved back to the quarter's first month. (NULL stays NULL, as in every bucket.)
  QUARTER:
    "date(?? / 1000.0, 'unixepoch', 'start of month', '-' || ((CAST(strftime('%m', ?? / 1000.0, 'unixepoch') AS INTEGER) - 1) % 3) || ' months')",
  YEAR: "date(?? / 1000.0, 'unixepoch', 'start of year')"
}

const columnsIn = (sql: string, column: SqlColumn) => Array(sql.split('??').length - 1).fill(column)

/** Buckets in zones other than UTC: how a row's bucket is computed, and how a grouped one is named. */
interface ZoneBuckets {
  bucket(column: SqlColumn, bucket: DateBucket, zone: string): Knex.Raw
  name(start: string): Knex.Raw
  needsFunction: boolean
}

/**
 * better-sqlite3 registers JavaScript functions on its connections: the plugin's answers each row's bucket
 * name. node-sqlite3 cannot, so its statements carry the zone's offsets as SQL (`sqlite-zone-buckets.ts`).
 */
function zoneBuckets(knex: Knex): ZoneBuckets {
  if (betterSqliteClient(knex)) {
    return {
      bucket: (column, bucket, zone) =>
        knex.raw(`${SQLITE_BUCKET_FUNCTION}(??, ?, ?)`, [column, bucket, zone]),
      name: (start) => knex.raw('??', [start]),
      needsFunction: true
    }
  }
  return {
    bucket: (column, bucket, zone) => zoneBucketStart(knex, column, bucket, zone),
    name: (start) => zoneBucketName(knex, start),
    needsFunction: false
  }
}

function dateBuckets(knex: Knex): DateBuckets {
  const zones = zoneBuckets(knex)
  return {
    bucket: (column, bucket, zone) =>
      zone === UTC
        ? knex.raw(UTC_BUCKETS[bucket], columnsIn(UTC_BUCKETS[bucket], column))
        : zones.bucket(column, bucket, zone),
    nameAfterGrouping: (start, bucket, zone) => {
      if (wholeDaysInUtc(bucket, zone)) return knex.raw("?? || 'T00:00:00'", [start])
      return zone === UTC ? knex.raw('??', [start]) : zones.name(start)
    },
    startIsDate: wholeDaysInUtc,
    keyTable: (keys) => knex.raw('(SELECT value AS __fq_key FROM json_each(?))', [keys]),
    stepTable: (steps) =>
      knex.raw(
        "(SELECT json_extract(value, '$[0]') AS __fq_key, json_extract(value, '$[1]') AS __fq_previous, json_extract(value, '$[2]') AS __fq_earlier FROM json_each(?))",
        [steps]
      ),
    needsFunction: zones.needsFunction
  }
}

export function sqliteDialect(knex: Knex): Dialect {
  return {
    name: 'sqlite',
    knex,
    like: (column, value) => knex.raw('?? GLOB ?', [column, value]),
    likeValue: likeToGlob,
    // SQLite's LIKE has no escape character unless told; MySQL's and PostgreSQL's is the backslash.
    iLike: (column, pattern) => knex.raw("LOWER(??) LIKE LOWER(?) ESCAPE '\\'", [column, pattern]),
    list: jsonEachList,
    integer: '?',
    // SUM fails with "integer overflow" past 64 bits; TOTAL adds in double precision, and is 0 for no value.
    sum: (column) => knex.raw('CASE WHEN COUNT(??) > 0 THEN TOTAL(??) END', [column, column]),
    // SQLite's AVG is a double already.
    average: (column) => knex.raw('AVG(??)', [column]),
    rawRows: (result) => result as Rows,
    dateBuckets: dateBuckets(knex),
    // SQLite has none of them, and node-sqlite3 cannot register any: all are computed in plain SQL.
    statistics: { native: {}, floor: (sql) => `CAST(${sql} AS INTEGER)` },
    insert: (table, row) => table.insert(row),
    upsert: sqliteUpsert
  }
}
