import type { Query } from '@feathersjs/feathers'
import type { Filter } from '../model/query'
import type { ResolvedResource } from '../resource/resolved'
import { FeathersQueryParser } from '../query/feathers-syntax'

const parsers = new WeakMap<ResolvedResource, FeathersQueryParser>()

/**
 * The filter of a live query's Feathers `query`, for telling which writes cannot change its result; undefined
 * when it does not parse (the call itself then answers the client's mistake).
 */
export function toFilterOfQuery(resource: ResolvedResource, query: Query): Filter | undefined {
  let parser = parsers.get(resource)
  if (!parser) parsers.set(resource, (parser = new FeathersQueryParser(resource)))
  try {
    return parser.parse(query, { collection: true, external: true }).filter
  } catch {
    return undefined
  }
}
