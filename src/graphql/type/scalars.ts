import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql'
import { DATE_RANGE, isStorableDate, parseIsoDate } from '../../resource/iso-date'

/**
 * Dates travel as RFC 3339 date-times with an offset, read by the one parser REST uses too, so that REST
 * and GraphQL take the same values and none is read in the server's time zone.
 */
function parseDateTime(value: unknown): string {
  const time = typeof value === 'string' ? parseIsoDate(value) : NaN
  if (Number.isNaN(time)) {
    throw new GraphQLError(
      `DateTime must be an ISO 8601 date-time with an offset, e.g. 2026-09-20T12:30:00.000Z`
    )
  }
  if (!isStorableDate(time)) throw new GraphQLError(`DateTime must be ${DATE_RANGE}`)
  // Passed on as given: the SQL compiler converts filter values to dates for the driver.
  return value as string
}

function serializeDateTime(value: unknown): string {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'number') return new Date(value).toISOString()
  if (typeof value === 'string') return value
  throw new GraphQLError(`DateTime cannot represent ${String(value)}`)
}

/** An ISO 8601 UTC date-time; records carry dates in this form on every surface. */
export function dateTimeScalar() {
  return new GraphQLScalarType<string, string>({
    name: 'DateTime',
    description: 'A date-time string in ISO 8601 format at UTC, e.g. 2026-09-20T12:30:00.000Z.',
    serialize: serializeDateTime,
    parseValue: parseDateTime,
    parseLiteral(node: ValueNode) {
      if (node.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string', { nodes: node })
      return parseDateTime(node.value)
    }
  })
}

function parseCursor(value: unknown): string {
  if (typeof value !== 'string') throw new GraphQLError('ConnectionCursor must be a string')
  return value
}

/** Opaque to clients; `cursor.ts` gives it its meaning. */
export function connectionCursorScalar() {
  return new GraphQLScalarType<string, string>({
    name: 'ConnectionCursor',
    description: 'An opaque position in a connection, for paging with after/before.',
    serialize: (value) => parseCursor(value),
    parseValue: parseCursor,
    parseLiteral(node: ValueNode) {
      if (node.kind === Kind.STRING) return node.value
      throw new GraphQLError('ConnectionCursor must be a string', { nodes: node })
    }
  })
}
