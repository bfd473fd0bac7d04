import type { GraphQLField, GraphQLFieldConfig } from 'graphql'
import type { ResolvedPaging, ResolvedResource } from '../../resource/resolved'

/**
 * The database work resolving a field causes, declared where the field is built and read by the limits rule
 * (`operationLimits`), which counts a request's SQL statements and aggregate entries before anything runs.
 */
export interface FieldWork {
  /**
   * `once`: one statement wherever the field is selected (root queries, the count of a root connection);
   * `batched`: one per batch of up to `batchSize` parents (relations, loaded through dataloaders).
   */
  statements: 'once' | 'batched'
  batchSize?: number
  /** Aggregate lists: at most this many entries per statement when `groupBy` is selected, else one. */
  maxGroups?: number
  /** Unpaged lists (paging strategy NONE): at most this many records each time the field resolves. */
  listSize?: number
  /**
   * A field of a connection beside its page (its `aggregate`): resolved once per connection, not once per
   * record of the page as the page's own fields are.
   */
  besideRecords?: boolean
}

const KEY = 'feathersQueryWork'

/** The field config with its work declared. */
export function withWork<S, C>(config: GraphQLFieldConfig<S, C>, work: FieldWork): GraphQLFieldConfig<S, C> {
  return { ...config, extensions: { ...config.extensions, [KEY]: work } }
}

export function workOf(field: GraphQLField<unknown, unknown>): FieldWork | undefined {
  return field.extensions[KEY] as FieldWork | undefined
}

/** The work of a collection field: an unpaged list (NONE) holds up to the target's `maxResultsSize`. */
export function collectionWork(work: FieldWork, target: ResolvedResource, paging: ResolvedPaging): FieldWork {
  return paging.strategy === 'none' ? { ...work, listSize: target.query.maxResultsSize } : work
}
