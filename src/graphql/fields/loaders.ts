import DataLoader from 'dataloader'
import type { FieldNode } from 'graphql'
import type { ResolvedManyRelation, ResolvedOneRelation, ResolvedResource } from '../../resource/resolved'
import { andFilters } from '../../query/filters'
import type { Filter, LinkQuery, Scalar } from '../../model/query'
import type { AggregateRequest, AggregateResponse, PartitionedAggregates } from '../../model/aggregate'
import type { Page, PartitionedPages } from '../../model/page'
import type { ResourceRecord } from '../../model/records'
import { copyWith } from '../../common/copy-with'
import { asForeignKey } from '../type/field-types'
import type { PageRequest } from './collection-args'
import type { ServiceCaller } from './service-caller'
import { asRelationRead } from '../../live/read-recorder'

/**
 * The loader key of each relation request, which parents of one page share (see `sameRequest`): made once,
 * not once per parent (a string of the request's JSON, hashed again for every lookup when made anew).
 */
const requestKeys = new WeakMap<PageRequest, { relation: ResolvedManyRelation; key: string }>()

/** Parents per statement; well below the SQL compiler's limit on `in` lists. */
export const MAX_BATCH = 500

/**
 * Parents per relation aggregate statement: no more than the target's group limit, which counts the entries
 * of all the parents of a statement, so that parents asking for one entry each never exceed it together.
 */
export function aggregateBatchSize(target: ResolvedResource, pageSize?: number) {
  const perParent = pageSize === undefined ? 1 : pageSize + 1
  return Math.max(1, Math.min(MAX_BATCH, Math.floor(target.maxAggregateGroups / perParent)))
}

/** What identifies a relation's loads: its target and how parents are linked to it. */
function relationKey(relation: ResolvedManyRelation) {
  const { target, through } = relation
  if (!through) return `${target.name}.${relation.foreignKey.name}`
  return `${target.name}<${through.resource.name}.${through.foreignKey.name}.${through.otherKey.name}`
}

/**
 * How a many-relation's records are found for a set of parents: by the target's foreign key (partitioned by
 * it), or for many-to-many through the join resource's links (partitioned by the link's key of the parent).
 * `field` holds the parent ids, so the keys are converted to its type.
 */
function parentsOf(relation: ResolvedManyRelation, keys: unknown[]) {
  const { through } = relation
  if (!through) {
    const { foreignKey } = relation
    return {
      filter: { [foreignKey.name]: { in: keys as Scalar[] } } as Filter,
      query: { partitionBy: foreignKey.name }
    }
  }
  const link: LinkQuery = {
    resource: through.resource.name,
    foreignKey: through.foreignKey.name,
    otherKey: through.otherKey.name,
    parents: keys as Scalar[]
  }
  return { filter: undefined, query: { through: link } }
}

/** The field holding a many-relation's parent ids: the target's foreign key, or the join resource's. */
function parentKeyField(relation: ResolvedManyRelation) {
  return relation.through ? relation.through.foreignKey : relation.foreignKey
}

function emptyPage(request: PageRequest): Page<ResourceRecord> {
  const { limit, offset } = request.window
  const page: Page<ResourceRecord> = { data: [], limit, skip: offset, hasNextPage: false }
  if (request.totalCount) page.total = 0
  // A keyset page is empty between its cursor and the end it reads towards: the records the cursor came
  // from lie on the other side.
  if (request.keyset) {
    page.hasNextPage = request.keyset.before !== undefined
    page.hasPreviousPage = request.keyset.after !== undefined
  }
  return page
}

/**
 * The per-request dataloaders of relation fields. Loads made in the same tick are batched into one service
 * call, so a page of parents costs one statement per relation whatever its size. Loaders are keyed by the
 * relation and the JSON of the field's arguments: parents asking different pages or filters never share.
 */
export class RelationLoaders {
  private readonly loaders = new Map<string, DataLoader<unknown, unknown, string>>()

  /** The request each relation field worked out in this execution, by its nodes (see `sameRequest`). */
  readonly fieldRequests = new Map<readonly FieldNode[], PageRequest>()

  constructor(private readonly caller: ServiceCaller) {}

  private loader<V>(
    key: string,
    batch: (keys: readonly unknown[]) => Promise<V[]>,
    maxBatchSize = MAX_BATCH
  ): DataLoader<unknown, V, string> {
    let loader = this.loaders.get(key)
    if (!loader) {
      loader = new DataLoader<unknown, V, string>(batch, { cacheKeyFn: String, maxBatchSize })
      this.loaders.set(key, loader as DataLoader<unknown, unknown, string>)
    }
    return loader as DataLoader<unknown, V, string>
  }

  /**
   * A page of the relation's records per parent id, all parents in one partitioned `find` (each parent gets
   * its own window, e.g. its own first 10). Parents without records get an empty page.
   */
  many(relation: ResolvedManyRelation, request: PageRequest) {
    const { target } = relation
    const parentKey = parentKeyField(relation)
    let known = requestKeys.get(request)
    if (known?.relation !== relation) {
      known = { relation, key: `many:${relationKey(relation)}:${JSON.stringify(request)}` }
      requestKeys.set(request, known)
    }
    return this.loader<Page<ResourceRecord>>(known.key, async (parentIds) => {
      const keys = parentIds.map((id) => asForeignKey(parentKey, id))
      const parents = parentsOf(relation, keys)
      const result = (await asRelationRead(() =>
        this.caller.service(target).find(
          this.caller.params({
            filter: andFilters(request.filter, parents.filter),
            sorting: request.sorting,
            paging: request.window,
            ...(request.keyset ? { keyset: request.keyset } : {}),
            totalCount: request.totalCount,
            ...parents.query,
            // A copy: hooks may add to it, and parents of later pages share the request.
            select: request.select && [...request.select]
          })
        )
      )) as PartitionedPages<ResourceRecord>
      const { limit, offset } = request.window
      const pages = new Map(
        result.partitions.map(({ key, start, end, hasNextPage, hasPreviousPage, total }) => {
          const page: Page<ResourceRecord> = {
            data: result.data.slice(start, end),
            limit,
            skip: offset,
            hasNextPage
          }
          if (total !== undefined) page.total = total
          if (hasPreviousPage !== undefined) page.hasPreviousPage = hasPreviousPage
          if (result.keysetFields) page.keysetFields = result.keysetFields
          return [String(key), page]
        })
      )
      return keys.map((parent) => pages.get(String(parent)) ?? emptyPage(request))
    })
  }

  /**
   * The aggregates of the relation's records per parent id, all parents in one `aggregate` partitioned by
   * the foreign key. Parents without matching records get what an empty set aggregates to.
   */
  aggregate(relation: ResolvedManyRelation, request: AggregateRequest, filter: Filter | undefined) {
    const { target } = relation
    const parentKey = parentKeyField(relation)
    const key = `aggregate:${relationKey(relation)}:${JSON.stringify({ request, filter })}`
    return this.loader<AggregateResponse[]>(
      key,
      async (parentIds) => {
        const keys = parentIds.map((id) => asForeignKey(parentKey, id))
        const parents = parentsOf(relation, keys)
        const ofParents = andFilters(filter, parents.filter)
        const result = (await asRelationRead(() =>
          this.caller
            .service(target)
            .aggregate(
              copyWith(request, { partitionBy: parents.query.partitionBy }),
              this.caller.params({ filter: ofParents, through: parents.query.through })
            )
        )) as PartitionedAggregates
        const byParent = new Map(result.partitions.map(({ key: id, responses }) => [String(id), responses]))
        return keys.map((parent) => byParent.get(String(parent)) ?? result.empty)
      },
      // A page of groups per parent: as many parents as their pages (and the row telling of a next) fit.
      aggregateBatchSize(
        target,
        request.paging ? (request.paging.limit ?? target.maxAggregateGroups) : undefined
      )
    )
  }

  /**
   * The related record per foreign key value (null when missing or not visible), all in one `find` that reads
   * the fields in `select`.
   */
  one(relation: ResolvedOneRelation, select: string[] | undefined) {
    const { target } = relation
    const id = target.idField.name
    return this.loader<ResourceRecord | null>(
      `one:${target.name}:${select?.join(',') ?? '*'}`,
      async (ids) => {
        const records = (await asRelationRead(() =>
          this.caller.service(target).find(
            copyWith(this.caller.params({ filter: { [id]: { in: ids.map(String) } }, select }), {
              lookup: true
            })
          )
        )) as ResourceRecord[]
        const byId = new Map(records.map((record) => [String(record[id]), record]))
        return ids.map((value) => byId.get(String(value)) ?? null)
      }
    )
  }
}
